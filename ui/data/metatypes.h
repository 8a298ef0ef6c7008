#pragma once

// core's value types cross threads by queued signals: Qt must know them.

#include "relctl/console.h"

#include <QMetaType>
#include <optional>
#include <vector>

Q_DECLARE_METATYPE(relctl::AuditPageRequest)
Q_DECLARE_METATYPE(relctl::AuditPage)
Q_DECLARE_METATYPE(relctl::TimelineSlice)
Q_DECLARE_METATYPE(std::vector<relctl::EnvironmentRow>)
Q_DECLARE_METATYPE(std::optional<relctl::RefusalTrace>)
