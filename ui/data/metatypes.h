#pragma once

// core's value types cross threads by queued signals: Qt must know them.

#include "relctl/auditexport.h"
#include "relctl/console.h"
#include "relctl/rehearsal.h"

#include <QMetaType>
#include <atomic>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

Q_DECLARE_METATYPE(relctl::AuditPageRequest)
Q_DECLARE_METATYPE(relctl::AuditPage)
Q_DECLARE_METATYPE(relctl::TimelineSlice)
Q_DECLARE_METATYPE(std::vector<relctl::EnvironmentRow>)
Q_DECLARE_METATYPE(std::optional<relctl::RefusalTrace>)
Q_DECLARE_METATYPE(relctl::AuditSort)
Q_DECLARE_METATYPE(relctl::AuditFilter)
Q_DECLARE_METATYPE(relctl::rehearsal::Scenario)
Q_DECLARE_METATYPE(relctl::rehearsal::Step)
Q_DECLARE_METATYPE(relctl::rehearsal::ScenarioResult)
Q_DECLARE_METATYPE(relctl::rehearsal::Report)

namespace relctl::ui {

// Set by the GUI thread to stop an export running on a worker's thread.
using ExportCancelFlag = std::shared_ptr<std::atomic<bool>>;

// The environments a read found, handed from the worker's thread to the
// model without a copy: a queued signal copies its arguments, and 10,000
// rows copied twice (by the signal, then into the model) cost the first
// load 70 ms on the GUI thread. Copies of the handle share the rows. They
// have one taker, the session, which moves them into its model: after
// take() every handle reads none. (Whether another handle is still alive
// says nothing here: the worker's own may not yet be destroyed when the
// GUI thread takes the rows.) Anything else that wants the rows reads
// them before the session does, or from the session's model.
class EnvironmentRows
{
public:
    EnvironmentRows() : EnvironmentRows(std::vector<relctl::EnvironmentRow>{}) {}
    // Implicit: a read's rows are what is handed on.
    EnvironmentRows(std::vector<relctl::EnvironmentRow> rows)
        : m_rows(std::make_shared<std::vector<relctl::EnvironmentRow>>(std::move(rows)))
    {
    }

    const std::vector<relctl::EnvironmentRow>& rows() const { return *m_rows; }
    // The rows, moved out (every handle is left empty).
    std::vector<relctl::EnvironmentRow> take() const { return std::move(*m_rows); }

private:
    std::shared_ptr<std::vector<relctl::EnvironmentRow>> m_rows;
};

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ExportCancelFlag)
Q_DECLARE_METATYPE(relctl::ui::EnvironmentRows)
