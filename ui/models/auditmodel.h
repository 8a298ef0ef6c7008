#pragma once

// The audit browser's table: events newest first, loaded page by page on
// demand. The model never queries: fetchMore() asks for the next page with
// fetchRequested(), and whoever owns a worker connection answers with
// appendPage().

#include "relctl/console.h"

#include <QAbstractTableModel>
#include <cstdint>
#include <optional>
#include <vector>

class QIODevice;

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
        Job,
        Release,
        Generation,
        Token,
        Current, // the manifest and lease current at the event: release / generation / token
        OpId,
        Host,
        Pid,
        JobUrl,
        Actor,
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
    // new filter. Until the first setFilter() the model is idle: empty, and
    // canFetchMore() is false.
    void setFilter(relctl::AuditFilter filter);
    const relctl::AuditFilter& filter() const { return m_filter; }
    void setPageSize(int limit);

    // The answer to fetchRequested(serial, ...). Every request carries a fresh
    // serial and at most one request is outstanding; a page whose serial is not
    // the outstanding one answers an older filter (or arrived twice) and is
    // dropped: returns false. An empty page ends the list whatever `more` says,
    // so a view that keeps asking cannot loop.
    bool appendPage(std::uint64_t serial, relctl::AuditPage page);
    // The request could not be answered (the worker failed): forget it, so a
    // later fetchMore() asks again.
    void requestFailed(std::uint64_t serial);
    bool hasPendingRequest() const { return m_pending.has_value(); }

    // True while the server may hold more events than are loaded, including
    // while a page is on its way.
    bool canFetchMore(const QModelIndex& parent) const override;
    // Emits fetchRequested() for the next page, unless one is outstanding.
    void fetchMore(const QModelIndex& parent) override;

    // Rows are newest first with strictly decreasing ids: a binary search.
    std::optional<int> rowForEvent(std::int64_t eventId) const;
    // Null when out of range. The pointer lives until the next setFilter().
    const relctl::AuditEvent* eventAt(int row) const;

    // The loaded rows (fetch everything filtered first to export it all).
    // CSV: a header row of the JSON field names, RFC 4180 quoting, CRLF lines.
    // JSON: an array of objects shaped like `relctl audit --json` events, with
    // null for absent values. Both return false when the device fails.
    bool exportCsv(QIODevice& device) const;
    bool exportJson(QIODevice& device) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

signals:
    void fetchRequested(quint64 serial, const relctl::AuditPageRequest& request);

private:
    void requestNextPage();
    const relctl::AuditEvent& loadedEvent(int row) const;

    // The pages as they came, each kept whole: appending moves a vector in
    // instead of reallocating and moving every loaded row (at 100k rows, tens
    // of MB on the GUI thread). Newest first, ids strictly decreasing across
    // all of them.
    struct Chunk
    {
        std::vector<relctl::AuditEvent> events; // never empty
        int firstRow = 0;
    };

    relctl::AuditFilter m_filter;
    std::vector<Chunk> m_chunks;
    int m_rowCount = 0;
    std::optional<std::uint64_t> m_pending; // the serial of the outstanding request
    std::uint64_t m_lastSerial = 0;
    int m_pageSize = 500;
    bool m_active = false; // a filter was set
    bool m_more = false;
};

} // namespace relctl::ui
