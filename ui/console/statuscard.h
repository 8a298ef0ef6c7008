#pragma once

#include "consoletypes.h"

#include <QWidget>

class QLabel;
class QPushButton;
class QTreeWidget;

namespace relctl::ui {

// What became of one job or op id, as the database tells it
// (relctl::JobStatus): the state as a coloured badge, its sentence, the next
// step in bold, a stopped command's caveat where it cannot be missed, and
// the rows it rests on as keys and values. Fed with values; it never asks.
// Between a lookup and its answer it says it is looking, so an earlier
// answer is never read as this one's.
class StatusCard final : public QWidget
{
    Q_OBJECT

public:
    explicit StatusCard(QWidget* parent = nullptr);

    void showLookingUp(const StatusLookup& lookup);
    // readAtMs: when it was read (the card is a snapshot: a running job moves on).
    void showStatus(const StatusLookup& lookup, const relctl::JobStatus& status, qint64 readAtMs);
    // The lookup could not be answered. A card already showing this lookup
    // keeps its answer, marked as not read again.
    void showFailure(const StatusLookup& lookup, const QString& message);

    const StatusLookup& lookup() const { return m_lookup; }
    // What the card shows, for tests and copying: the state, the lines
    // shown, the evidence as "key: value" lines.
    QString state() const;
    QString summary() const;
    QString next() const;
    QString caveat() const; // empty when hidden
    QString notice() const; // looking up, read at, failed
    QStringList evidence() const;
    QColor badgeColour() const;

signals:
    // "Look up as an op id instead": an unknown job may be an op id, and the
    // other way round; the kind is the reviewer's to choose, never guessed.
    void lookupRequested(const relctl::ui::StatusLookup& lookup);

private:
    void setBadge(const QString& state);
    void clear();

    StatusLookup m_lookup;
    bool m_answered = false;
    QLabel* m_badge;
    QLabel* m_subject;
    QLabel* m_summary;
    QLabel* m_next;
    QLabel* m_caveat;
    QTreeWidget* m_evidence;
    QLabel* m_notice;
    QPushButton* m_otherKind;
};

} // namespace relctl::ui
