#pragma once

#include <string_view>

namespace relctl {

// Orders names as people count: the digits in a name compare as numbers, so
// svc2 comes before svc10 and svc10.prod before svc100.prod. Everything
// else compares byte by byte; names equal as numbers (svc01, svc1) fall back
// to plain order, so this is a strict weak order and two names compare
// equal only when they are equal. The CLI's lists and the console's views
// sort with it, so both show an organisation in the same order.
bool naturalLess(std::string_view a, std::string_view b);

} // namespace relctl
