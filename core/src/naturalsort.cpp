#include "relctl/naturalsort.h"

#include <cstddef>

namespace relctl {

namespace {

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

} // namespace

bool naturalLess(std::string_view a, std::string_view b)
{
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (isDigit(a[i]) && isDigit(b[j])) {
            // Compare the runs of digits as numbers of any length: without
            // leading zeros, the longer run is the larger number.
            std::size_t zi = i, zj = j;
            while (zi < a.size() && a[zi] == '0')
                ++zi;
            while (zj < b.size() && b[zj] == '0')
                ++zj;
            std::size_t ei = zi, ej = zj;
            while (ei < a.size() && isDigit(a[ei]))
                ++ei;
            while (ej < b.size() && isDigit(b[ej]))
                ++ej;
            if (ei - zi != ej - zj)
                return ei - zi < ej - zj;
            const int c = a.substr(zi, ei - zi).compare(b.substr(zj, ej - zj));
            if (c != 0)
                return c < 0;
            i = ei;
            j = ej;
            continue;
        }
        if (a[i] != b[j])
            return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
        ++i;
        ++j;
    }
    if (i < a.size() || j < b.size())
        return i == a.size(); // a prefix comes first
    // Equal as numbers: plain order decides (svc01 before svc1).
    return a < b;
}

} // namespace relctl
