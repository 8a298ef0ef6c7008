#pragma once

// The timeline's legend: what each lease colour, marker shape and shading
// means, as a strip along the bottom of the widget, below the lanes (which
// scroll) so it never covers data. It flows into as many rows as the width
// needs, up to a limit the widget sets (a quarter of its height: the lanes
// are the data, the legend is help). Entries past the limit are not dropped
// silently: the last one shown is "+N more (L)", whose tooltip explains each
// hidden entry and whose click shows them all; the whole legend then ends in
// "Fewer (L)". Its entries are hit-testable, so the tooltip can explain each one.

#include <QRect>
#include <QString>
#include <vector>

class QFont;

namespace relctl::ui {

struct LegendEntry
{
    // GroupHeld: a collapsed group's lane, held by 1, 2, 3, 4 or more
    // members at once (TimelinePainter::heldColour).
    // Toggle: "+N more (L)" or "Fewer (L)", a click away from the whole
    // legend or from the short one; no swatch.
    enum class Swatch { Caption, Lease, Freeze, Marker, Group, Now, GroupHeld, Toggle };
    Swatch swatch = Swatch::Caption;
    // The LeaseEnding or MarkerKind it shows; for a Group: 0 one kind,
    // 1 several kinds, 2 several kinds with a refusal.
    int index = 0;
    QString label;
    QString help;     // the tooltip's explanation
    QRect rect;       // the whole entry, in widget coordinates; null while not shown
    QRect swatchRect; // empty for a caption

    bool shown() const { return !rect.isNull(); }
};

class TimelineLegend final
{
public:
    TimelineLegend();

    // Flows the entries into rows of `width` starting at `top`, in the
    // widget's font (captions in its bold); returns the strip's height. When
    // they need more than maxRows rows (0: no limit), only what fits in
    // maxRows is shown, ending in "+N more (L)"; with `whole`, every entry,
    // ending in "Fewer (L)".
    int layout(const QFont& font, int width, int top, int maxRows = 0, bool whole = false);
    int height() const { return m_height; }
    // The height the whole legend would take at the last layout's width,
    // without "Fewer (L)": what the widget asks for in its size hint.
    int wholeHeight() const { return m_wholeHeight; }
    // The height of a strip of `rows` rows.
    static int heightOf(const QFont& font, int rows);
    // Every explaining entry, shown or not (see LegendEntry::shown()).
    const std::vector<LegendEntry>& entries() const { return m_entries; }
    // "+N more (L)" or "Fewer (L)" when shown, else nullptr.
    const LegendEntry* toggle() const { return m_toggle.shown() ? &m_toggle : nullptr; }
    // What the strip draws: the shown entries in order, then the toggle.
    std::vector<const LegendEntry*> drawn() const;
    // The explaining entries (captions apart) the last layout left out.
    int hiddenCount() const { return m_hidden; }
    // The shown entry (or toggle) at pos (widget coordinates), or nullptr.
    const LegendEntry* entryAt(const QPoint& pos) const;

    static constexpr int kSwatchWidth = 16;

private:
    std::vector<LegendEntry> m_entries;
    LegendEntry m_toggle;
    int m_hidden = 0;
    int m_height = 0;
    int m_wholeHeight = 0;
};

} // namespace relctl::ui
