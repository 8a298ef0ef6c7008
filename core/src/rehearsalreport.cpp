// The rehearsal's HTML report: one self-contained file (inline CSS and SVG,
// no script, no external asset) that can be attached to an incident ticket or
// a CI artifact and opened anywhere.

#include "relctl/rehearsal.h"
#include "relctl/timelinecolours.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace relctl::rehearsal {

namespace {

std::string html(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&#39;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

std::string seconds(std::int64_t ms)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.3f s", static_cast<double>(ms) / 1000.0);
    return buffer;
}

// The console's colours (relctl/timelinecolours.h): a colour means the same
// in the report as on the console's timeline.
std::string colourOf(const std::string& ending)
{
    return std::string(timelinecolours::forEnding(ending));
}

// An event's mark as the console draws it: its kind's shape and colour, so
// the report reads like the timeline (red is a refusal, and only that). The
// title, already escaped, is its hover text.
std::string markerShape(const std::string& kind, int cx, int cy, const std::string& title)
{
    const std::string colour(timelinecolours::forMarker(kind));
    const std::string solid = " fill='" + colour + "' stroke='#fff'";
    const std::string hollow = " fill='none' stroke-width='1.6' stroke='" + colour + "'";
    const auto n = [](int v) { return std::to_string(v); };
    const auto point = [&](int px, int py) { return n(px) + "," + n(py) + " "; };
    std::string tag;
    std::string element;
    if (kind == "publish" || kind == "refusal" || kind == "rollback") {
        // A diamond; a triangle pointing down at the moment of the refusal;
        // one pointing back for a rollback.
        const std::string points =
            kind == "publish" ? point(cx, cy - 5) + point(cx + 5, cy) + point(cx, cy + 5) + point(cx - 5, cy)
            : kind == "refusal" ? point(cx - 5, cy - 4) + point(cx + 5, cy - 4) + point(cx, cy + 5)
                                : point(cx + 4, cy - 5) + point(cx + 4, cy + 5) + point(cx - 5, cy);
        tag = "polygon";
        element = "<polygon points='" + points + "'" + solid;
    } else if (kind == "superseded" || kind == "promotion") {
        // A square: a gate decided; hollow for a superseded candidate.
        const int half = 4;
        tag = "rect";
        element = "<rect x='" + n(cx - half) + "' y='" + n(cy - half) + "' width='" + n(2 * half) +
                  "' height='" + n(2 * half) + "'" + (kind == "superseded" ? hollow : solid);
    } else {
        // A dot: an operator action; hollow for a queued candidate (not an event).
        tag = "circle";
        element = "<circle cx='" + n(cx) + "' cy='" + n(cy) + "' r='" +
                  (kind == "queued" ? "3.5'" + hollow : "4.5'" + solid);
    }
    if (title.empty())
        return element + "/>";
    return element + "><title>" + title + "</title></" + tag + ">";
}

// What the colours and shapes mean, from the same table: the legend cannot
// drift from the drawing.
std::string legend()
{
    namespace tc = timelinecolours;
    std::ostringstream out;
    out << "<p class=muted>Bars, leases by token:";
    for (const char* ending : {"live", "released", "expired", "revoked"})
        out << " <span style='color:" << tc::forEnding(ending) << "'>&#9632;</span> " << ending;
    out << ". Marks, events:";
    for (const char* kind :
         {"publish", "refusal", "superseded", "queued", "operator", "rollback", "promotion"})
        out << " <svg width='12' height='12' aria-hidden='true'>" << markerShape(kind, 6, 6, {}) << "</svg> "
            << (std::string_view(kind) == "operator"    ? "operator action"
                : std::string_view(kind) == "promotion" ? "promotion decision"
                                                        : kind);
    out << ". Red is kept for refusals. Hover for details.</p>";
    return out.str();
}

// The scenario's leases as bars, one row per lease in token order, and its
// recorded events as markers on a time axis in seconds from the first lease.
std::string timelineSvg(const TimelineSlice& slice)
{
    if (slice.leases.empty() && slice.markers.empty())
        return "<p class=muted>No lease or event was recorded.</p>";
    std::int64_t from = INT64_MAX;
    std::int64_t to = INT64_MIN;
    for (const LeaseSpan& l : slice.leases) {
        from = std::min(from, l.acquiredAt.millis());
        to = std::max(to, l.endsAt.millis());
    }
    for (const TimelineMarker& m : slice.markers) {
        from = std::min(from, m.at.millis());
        to = std::max(to, m.at.millis());
    }
    to = std::max(to, from + 1000);
    const int width = 880;
    const int left = 150;
    const int rowHeight = 22;
    const int markerRow = static_cast<int>(slice.leases.size());
    const int height = (markerRow + 2) * rowHeight + 24;
    const auto x = [&](std::int64_t t) {
        return left + static_cast<int>(static_cast<double>(t - from) / static_cast<double>(to - from) *
                                       (width - left - 10));
    };
    std::ostringstream svg;
    svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
        << "' role='img' aria-label='lease timeline'>";
    // Axis: a tick every second (or fewer on long scenarios).
    const std::int64_t span = to - from;
    const std::int64_t step = span <= 10000 ? 1000 : span <= 60000 ? 5000 : 30000;
    for (std::int64_t t = 0; t <= span; t += step) {
        const int px = x(from + t);
        svg << "<line x1='" << px << "' y1='0' x2='" << px << "' y2='" << height - 18
            << "' stroke='#e4e4e4'/><text x='" << px << "' y='" << height - 4
            << "' font-size='10' text-anchor='middle' fill='#666'>" << t / 1000 << " s</text>";
    }
    int row = 0;
    for (const LeaseSpan& l : slice.leases) {
        const int y = row * rowHeight + 4;
        const int x1 = x(l.acquiredAt.millis());
        const int x2 = std::max(x(l.endsAt.millis()), x1 + 2);
        svg << "<text x='4' y='" << y + 14 << "' font-size='11'>token " << l.token << " " << html(l.release)
            << "</text><rect x='" << x1 << "' y='" << y << "' width='" << x2 - x1 << "' height='"
            << rowHeight - 6 << "' rx='3' fill='" << colourOf(l.ending) << "'><title>" << html(l.job)
            << ": token " << l.token << ", release " << html(l.release) << " (generation " << l.generation
            << "), " << html(l.ending) << " after " << seconds(l.endsAt.millis() - l.acquiredAt.millis())
            << "</title></rect>";
        ++row;
    }
    const int y = markerRow * rowHeight + 4;
    svg << "<text x='4' y='" << y + 14 << "' font-size='11'>events</text>";
    for (const TimelineMarker& m : slice.markers) {
        const int px = x(m.at.millis());
        svg << markerShape(m.kind, px, y + 8,
                           html(m.kind + ": " + m.label) + " at +" + seconds(m.at.millis() - from));
    }
    svg << "</svg>" << legend();
    return svg.str();
}

} // namespace

std::string toHtml(const Report& report)
{
    std::ostringstream out;
    out << "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>relctl rehearsal: "
        << (report.passed() ? "passed" : "FAILED") << "</title><style>"
        << "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:980px;color:#222}"
        << "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}"
        << ".pass{color:#2e7d32;font-weight:600}.fail{color:#c62828;font-weight:600}.muted{color:#777}"
        << "table{border-collapse:collapse;width:100%;font-size:12px}td,th{border-bottom:1px solid #eee;"
        << "padding:2px 6px;text-align:left;vertical-align:top}th{background:#f6f6f6}"
        << "tr.refused td{background:#fff3f3}code{font-size:12px}"
        << "</style></head><body>";
    out << "<h1>relctl rehearsal: <span class=" << (report.passed() ? "pass>passed" : "fail>FAILED")
        << "</span></h1>"
        << "<p>" << report.scenarios.size() << " scenario(s) on the scratch database <code>"
        << html(report.database) << "</code>" << (report.dropped ? " (dropped afterwards)" : "")
        << (report.cancelled ? "; cancelled" : "")
        << ". Each scenario plays the real protocol through real <code>relctl</code> processes; its verdicts "
        << "come from the history checker on what the database recorded, and from the scenario's own "
        << "expectations.</p><ul>";
    for (const ScenarioResult& s : report.scenarios)
        out << "<li><a href='#" << html(s.name) << "'>" << html(s.name)
            << "</a>: <span class=" << (s.passed ? "pass>passed" : "fail>FAILED") << "</span> ("
            << seconds(s.durationMs) << ")</li>";
    out << "</ul>";
    for (const ScenarioResult& s : report.scenarios) {
        const auto info = std::find_if(scenarios().begin(), scenarios().end(),
                                       [&](const Scenario& x) { return x.name == s.name; });
        out << "<h2 id='" << html(s.name) << "'>" << html(s.name);
        if (info != scenarios().end())
            out << ": " << html(info->title);
        out << " <span class=" << (s.passed ? "pass>passed" : "fail>FAILED") << "</span></h2>";
        if (info != scenarios().end())
            out << "<p>" << html(info->explanation) << "</p>";
        if (!s.error.empty())
            out << "<p class=fail>" << html(s.error) << "</p>";
        out << "<h3>Lease timeline</h3>" << timelineSvg(s.timeline);
        out << "<h3>Verdicts</h3><table><tr><th></th><th>invariant</th><th>detail</th></tr>";
        for (const history::Verdict& v : s.invariants) {
            out << "<tr><td class=" << (v.passed ? "pass>ok" : "fail>FAIL") << "</td><td>" << html(v.name)
                << "</td><td>" << html(v.detail);
            for (std::size_t i = 1; i < v.violations.size() && i < 20; ++i)
                out << "<br>" << html(v.violations[i]);
            out << "</td></tr>";
        }
        out << "</table><h3>Steps</h3><table><tr><th>at</th><th>actor</th><th>action</th><th>outcome</th>"
            << "<th>token</th><th>generation</th><th>detail</th></tr>";
        for (const Step& st : s.steps) {
            const bool refused = !st.reason.empty() || st.outcome == "rejected";
            out << "<tr" << (refused ? " class=refused" : "") << "><td>+" << seconds(st.elapsedMs)
                << "</td><td>" << html(st.actor) << "</td><td>" << html(st.action) << "</td><td>"
                << html(st.outcome) << (st.reason.empty() ? "" : " " + html(st.reason)) << "</td><td>"
                << (st.token ? std::to_string(*st.token) : "") << "</td><td>"
                << (st.generation ? std::to_string(*st.generation) : "") << "</td><td>" << html(st.detail)
                << "</td></tr>";
        }
        out << "</table>";
    }
    out << "</body></html>\n";
    return out.str();
}

} // namespace relctl::rehearsal
