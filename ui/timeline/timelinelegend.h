#pragma once

// The timeline's legend: what each lease colour, marker shape and shading
// means, as a strip along the bottom of the widget, below the lanes (which
// scroll) so it never covers data. It flows into as many rows as the width
// needs. Its entries are hit-testable, so the tooltip can explain each one.

#include <QRect>
#include <QString>
#include <vector>

class QFont;

namespace relctl::ui {

struct LegendEntry
{
    // GroupHeld: a collapsed group's lane, held by 1, 2, 3, 4 or more
    // members at once (TimelinePainter::heldColour).
    enum class Swatch { Caption, Lease, Freeze, Marker, Group, Now, GroupHeld };
    Swatch swatch = Swatch::Caption;
    // The LeaseEnding or MarkerKind it shows; for a Group: 0 one kind,
    // 1 several kinds, 2 several kinds with a refusal.
    int index = 0;
    QString label;
    QString help;     // the tooltip's explanation
    QRect rect;       // the whole entry, in widget coordinates
    QRect swatchRect; // empty for a caption
};

class TimelineLegend final
{
public:
    TimelineLegend();

    // Flows the entries into rows of `width` starting at `top`, in the
    // widget's font (captions in its bold); returns the strip's height.
    int layout(const QFont& font, int width, int top);
    int height() const { return m_height; }
    const std::vector<LegendEntry>& entries() const { return m_entries; }
    // The entry at pos (widget coordinates), or nullptr.
    const LegendEntry* entryAt(const QPoint& pos) const;

    static constexpr int kSwatchWidth = 16;

private:
    std::vector<LegendEntry> m_entries;
    int m_height = 0;
};

} // namespace relctl::ui
