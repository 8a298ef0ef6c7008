#pragma once

// The environments table of the release console: one row per environment,
// fed with the rows a worker read (relctl::ConsoleQueries::environments()).

#include "relctl/console.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <chrono>
#include <vector>

namespace relctl::ui {

class EnvironmentsModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum class Column : int {
        Environment,
        CurrentRelease,
        Generation,
        PublishedBy,
        PublishedAt,
        LeaseHolder,
        HeldFor, // how long the live lease has been held, counting up
        ExpiresIn,
        Queue,
        Pending, // open supersession and promotion requests, awaiting a release manager's decision
        Policy,
        Frozen,
        Count
    };

    // Unscoped so views can pass them straight to data(); qualify them as Roles::X.
    enum Roles : int {
        EnvironmentName = Qt::UserRole + 1, // QString, on every column
        Frozen,                             // bool
        ExpiresAtMs,                        // qint64 on the server's clock, or invalid without a lease
        RemainingMs,                        // qint64 until expiry at the current estimate (may be < 0)
        HolderToken,                        // qint64 fencing token, or invalid
        CurrentGeneration,                  // qint64, or invalid before the first publish
        PendingDecisions,                   // qint64: supersession and promotion requests awaiting one
        NeedsMe,                            // bool: a request here waits for this login (setNeedsMe)
        Group,                              // QString: the group set, else the name up to its first '.'
        Attention, // QStringList: why the environment needs a person now, in words (empty: it does not)
        AttentionReasons, // QStringList: the same as reason codes (frozen, refused, decision, ...)
    };

    explicit EnvironmentsModel(QObject* parent = nullptr);

    // Replaces the rows. The same names in the same order update in place
    // (dataChanged only), so selections and scroll positions survive live
    // updates; added and removed names are inserted and removed row by row.
    // Also restarts the countdown clock from the rows' serverNow.
    void setEnvironments(std::vector<relctl::EnvironmentRow> rows);
    const std::vector<relctl::EnvironmentRow>& environments() const { return m_rows; }

    // A live update of some environments: `names` are the environments read
    // again, `rows` what the read found of them. A named row that is in
    // `rows` is replaced (dataChanged on that row only, when it changed) or
    // inserted at its place in natural order; a named row missing from
    // `rows` was removed. Other rows are not touched and the model is never
    // reset, so selections, scroll positions and proxies keep their state.
    // The work is proportional to the names, not to the rows held.
    void updateEnvironments(const QStringList& names, std::vector<relctl::EnvironmentRow> rows);
    // The row of the environment, or -1 (O(1)).
    int rowOf(const QString& name) const;

    // The server's "now" the countdowns are computed against. tick() derives it
    // from the serverNow of the last setEnvironments plus the local steady
    // clock's progress since; setNow() takes the caller's own estimate. Both
    // emit dataChanged for the "Held for" and "Expires in" columns only.
    void tick();
    void setNow(qint64 serverNowEstimate);
    qint64 now() const { return m_now; }

    // While the console cannot reach the database the rows are what it last
    // read: every cell is greyed, the countdowns stop (tick() and setNow()
    // change nothing) and the tooltips say so. Cleared by the next read.
    void setStale(bool stale);
    bool isStale() const { return m_stale; }

    // The environments where a request waits for this console's login (its
    // decision, now). Their rows are bold and say so in the tooltip, and
    // Roles::NeedsMe is true on them; the caller works the set out from the
    // requests and the login's permissions.
    void setNeedsMe(const QSet<QString>& environments);
    const QSet<QString>& needsMe() const { return m_needsMe; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    // "45 s", "2 min 5 s", "1 h 02 min" (rounded up to the second: "0 s"
    // while the lease is live would read as expired), "expired" at or past
    // zero. formatDuration's units, in whole seconds, since it ticks.
    static QString formatCountdown(std::int64_t remainingMs);
    // How long a lease has been held, the same way (rounded down).
    static QString formatHeld(std::int64_t heldMs);

private:
    static bool naturalRowLess(const relctl::EnvironmentRow& a, const relctl::EnvironmentRow& b);
    static bool sameData(const relctl::EnvironmentRow& a, const relctl::EnvironmentRow& b);
    bool mergeByName(std::vector<relctl::EnvironmentRow>& rows);
    // Numbers the rows from `from` on in m_index (0: afresh).
    void rebuildIndex(std::size_t from);
    void emitCountdownChanged();

    std::vector<relctl::EnvironmentRow> m_rows;
    QHash<QString, int> m_index; // name -> row, for rowOf and live updates
    qint64 m_serverNowAtUpdate = 0;
    std::chrono::steady_clock::time_point m_steadyAtUpdate;
    qint64 m_now = 0;
    bool m_stale = false;
    QSet<QString> m_needsMe;
};

} // namespace relctl::ui
