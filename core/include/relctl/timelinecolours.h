#pragma once

// What each colour of a lease timeline means, in one table read by the
// console's timeline (ui/timeline/timelinepainter.cpp) and the rehearsal's
// HTML report (core/src/rehearsalreport.cpp), so that a colour says the same
// thing in both: blue is a live lease in either, red a refusal and nothing
// else. Plain C++ without Qt, since core does not link Qt.
//
// The values are the colours on a white background. The console keeps each
// hue and changes only its lightness where a theme's background needs more
// contrast; a grey is a share of the theme's text colour (#9e9e9e is 38% of
// black on white), so the quiet kinds stay quiet on dark themes too.

#include <string_view>

namespace relctl::timelinecolours {

// Leases, by how they ended.
inline constexpr std::string_view kLive = "#2a78c2";     // blue: held now
inline constexpr std::string_view kReleased = "#9e9e9e"; // grey: the normal case, quiet
inline constexpr std::string_view kExpired = "#bb7f17";  // amber: its holder went silent
inline constexpr std::string_view kRevoked = "#803c96";  // purple: an operator stepped in

// Events, by kind.
inline constexpr std::string_view kPublish = "#2ba74a";    // green
inline constexpr std::string_view kRefusal = "#c40e0e";    // red, for refusals alone
inline constexpr std::string_view kSuperseded = "#404040"; // dark grey
inline constexpr std::string_view kQueued = "#808080";     // grey: waiting, not an event
inline constexpr std::string_view kOperator = "#2369af";   // blue: revoke, freeze, approval...
inline constexpr std::string_view kRollback = "#ab27ab";   // magenta, away from the refusals' red
inline constexpr std::string_view kPromotion = "#209e94";  // teal: a promotion approved or denied

// A lease's colour by its ending as the server names it; an ending not known
// here reads as released, as the console reads it.
constexpr std::string_view forEnding(std::string_view ending)
{
    if (ending == "live")
        return kLive;
    if (ending == "expired")
        return kExpired;
    if (ending == "revoked")
        return kRevoked;
    return kReleased;
}

// An event's colour by its kind as the server names it; a kind not known here
// is an operator action, as the console reads it.
constexpr std::string_view forMarker(std::string_view kind)
{
    if (kind == "publish")
        return kPublish;
    if (kind == "refusal")
        return kRefusal;
    if (kind == "superseded")
        return kSuperseded;
    if (kind == "queued")
        return kQueued;
    if (kind == "rollback")
        return kRollback;
    if (kind == "promotion")
        return kPromotion;
    return kOperator;
}

} // namespace relctl::timelinecolours
