#pragma once

// The audit browser's table: events in the server's order (newest first
// unless sorted otherwise), loaded page by page on demand. The model never queries: fetchMore() asks for the
// next page with fetchRequested(), and whoever owns a worker connection answers with appendPage().

#include "auditrange.h"
#include "relctl/console.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

namespace relctl::ui {

class AuditModel final : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum class Column : int {
        Time,
        Environment,
        Operation,
        Outcome,
        Reason,
        // Who acted and why, beside the outcome they explain: what an
        // incident review reads first.
        Actor,
        Detail, // the event's detail, readable ("reason: canary failed · frozen_by: alice")
        Job,
        Release,
        Generation,
        Token,
        Current, // the manifest and lease current at the event: release / generation / token
        OpId,
        Host,
        Pid,
        JobUrl,
        Login,   // the database login that made the call (db_user)
        Address, // its client address (client_addr); none over a local socket
        Count
    };

    // Unscoped so views can pass them straight to data(); qualify them as Roles::X.
    enum Roles : int {
        EventId = Qt::UserRole + 1, // qint64, on every column: selection sync with the timeline
        Rejected,                   // bool: the event is a refusal
        AtMs,                       // qint64 milliseconds since the epoch, UTC
    };

    explicit AuditModel(QObject* parent = nullptr);

    // Drops every loaded row (a reset) and asks for the first page under the
    // new filter and the current sort. Until the first setFilter() the model
    // is idle: empty, and canFetchMore() is false.
    void setFilter(relctl::AuditFilter filter);
    // The same, with a time range that follows the clock ("the last hour"):
    // its from and to are computed again from now on every read of the trail
    // (this one, a new sort, a reload), never frozen at the moment it was
    // chosen. Any other preset: the filter's own from and to are kept.
    void setFilter(relctl::AuditFilter filter, auditrange::Preset range);
    auditrange::Preset rangePreset() const { return m_range; }
    // Where "now" comes from for such a range (epoch ms, UTC); tests set it.
    void setClock(std::function<qint64()> nowMs);
    const relctl::AuditFilter& filter() const { return m_filter; }
    bool isActive() const { return m_active; }
    void setPageSize(int limit);

    // Sorting happens on the server: a new sort resets the model and asks for
    // the first page under it. Columns the server cannot sort by are ignored
    // (isSortable() says which). The default is time, newest first.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;
    static bool isSortable(int column);
    int sortColumn() const;
    Qt::SortOrder sortOrder() const;
    const relctl::AuditSort& auditSort() const { return m_sort; }

    // Events were recorded (the worker heard them). What the model does
    // depends on the sort, so that the reviewer's place is never lost:
    // - time, newest first: asks for the events newer than the newest it has
    //   and inserts them on top (selection and persistent indexes follow),
    //   or, while new events are held (setHoldNewEvents()), keeps them aside
    //   and counts them (newEventsPending()) until showNewEvents();
    // - time, oldest first: new events belong after the last row, so
    //   canFetchMore() turns true again and fetchMore() picks them up;
    // - any other sort: counts them (newEventsPending()) and waits for
    //   showNewEvents(), which reads the list again.
    // The server's filter decides what is new: a time range that has ended
    // gets nothing.
    void eventsArrived();
    // How far back (in event ids) a newer-than round looks for events that
    // committed after a later id was read: more than the writers that can be
    // in flight at once.
    static constexpr std::int64_t lateCommitWindow = 256;
    // Reads the filtered trail again under the same filter and sort (a reset).
    void reload();
    // Events counted by eventsArrived() and not shown: held, or under a sort
    // that does not show them.
    int pendingNewEvents() const { return m_newEvents; }
    // While the reviewer reads a row (the view knows when: scrolled away from
    // the top, or a row selected below the newest), rows inserted on top
    // would push it down under their eyes: new events are held instead.
    // Holding no longer inserts the held ones on top.
    void setHoldNewEvents(bool hold);
    bool holdsNewEvents() const { return m_hold; }
    // The reviewer asked for the new events: the held ones are inserted on
    // top (newest first, held or not), or the list is read again (a reset,
    // under sorts that cannot place them).
    void showNewEvents();

    // The answer to fetchRequested(serial, ...). Every request carries a fresh
    // serial and at most one request is outstanding; a page whose serial is not
    // the outstanding one answers an older filter or sort (or arrived twice) and
    // is dropped: returns false. An empty page ends the list whatever `more`
    // says, so a view that keeps asking cannot loop.
    bool appendPage(std::uint64_t serial, relctl::AuditPage page);
    // The request could not be answered (the worker failed): forget it, so a
    // later fetchMore() asks again.
    void requestFailed(std::uint64_t serial);
    bool hasPendingRequest() const { return m_pending.has_value(); }
    // The server answered the first page under this filter and sort, and no
    // event matched (yet: a live event may still arrive). False while that
    // page is on its way, so "no events" is never said before it is known.
    bool isEmptyResult() const { return m_emptyResult; }
    // Every event the filter matched when the trail was read is loaded: the
    // loaded rows are the whole result. False while more pages remain.
    bool isComplete() const { return m_answered && !m_more; }
    // How many events match, as far as it is known without a count from the
    // server (the page replies carry none): "1,234 events" once the whole
    // result is loaded, "at least 500 events" while more pages remain, and
    // the new events not shown yet. Empty until the first page answers.
    QString countText() const;

    // True while the server may hold more events than are loaded, including
    // while a page is on its way.
    bool canFetchMore(const QModelIndex& parent) const override;
    // Emits fetchRequested() for the next page, unless one is outstanding.
    void fetchMore(const QModelIndex& parent) override;

    // The row showing the event, under any sort: a hash kept on every insert.
    std::optional<int> rowForEvent(std::int64_t eventId) const;
    // Null when out of range. The pointer lives until the next reset.
    const relctl::Event* eventAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

signals:
    void fetchRequested(quint64 serial, const relctl::AuditPageRequest& request);
    // Under a sort that does not show new events: how many arrived since the
    // last reset (0 after one).
    void newEventsPending(int count);
    void emptyResultChanged(bool empty);
    // countText() may have changed.
    void countChanged();

private:
    enum class Pending { Page, Newer };

    void reset();
    void updateEmptyResult();
    void requestNextPage();
    void requestNewer(bool overlap);
    bool showsNewestFirst() const;
    void insertNewer(std::vector<relctl::Event> events);
    void holdNewer(std::vector<relctl::Event> events);
    void insertHeld();
    void insertLate(relctl::Event event);
    void appendRows(std::vector<relctl::Event> events);
    const relctl::Event& loadedEvent(int row) const;

    // The pages as they came, each kept whole: appending moves a vector in
    // instead of reallocating and moving every loaded row (at 100k rows, tens
    // of MB on the GUI thread). A chunk's rows have consecutive positions
    // from firstPosition; row = position - m_topPosition, so inserting on top
    // (a smaller m_topPosition) renumbers nothing.
    struct Chunk
    {
        std::vector<relctl::Event> events; // never empty
        std::int64_t firstPosition = 0;
    };

    relctl::AuditFilter m_filter;
    auditrange::Preset m_range = auditrange::Preset::Custom; // Custom: the filter's own from and to
    std::function<qint64()> m_now;
    relctl::AuditSort m_sort;
    std::deque<Chunk> m_chunks;
    QHash<std::int64_t, std::int64_t> m_positions; // event id -> position
    std::int64_t m_topPosition = 0;
    int m_rowCount = 0;
    std::optional<std::uint64_t> m_pending; // the serial of the outstanding request
    Pending m_pendingKind = Pending::Page;
    std::uint64_t m_lastSerial = 0;
    int m_pageSize = 500;
    bool m_active = false; // a filter was set
    bool m_more = false;
    bool m_answered = false; // the first page under this filter and sort arrived
    bool m_emptyResult = false;
    // The newest event id the loaded rows account for: events above it are new.
    std::optional<std::int64_t> m_horizon;
    bool m_newerWanted = false; // events arrived while a request was out
    int m_newEvents = 0;
    bool m_hold = false;
    // Newest first, while held: new events not yet inserted, each once.
    std::vector<relctl::Event> m_held;
    QSet<std::int64_t> m_heldIds;
};

} // namespace relctl::ui
