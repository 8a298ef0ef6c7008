#pragma once

// core's value types cross threads by queued signals: Qt must know them.

#include "relctl/auditexport.h"
#include "relctl/console.h"
#include "relctl/rehearsal.h"

#include <QMetaType>
#include <atomic>
#include <memory>
#include <optional>
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

} // namespace relctl::ui

Q_DECLARE_METATYPE(relctl::ui::ExportCancelFlag)
