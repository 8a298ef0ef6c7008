#pragma once

// How an audit event reads in the audit browser's cells, tooltips and
// headers: the formatting half of AuditModel, kept apart from its paging and
// live updates. Pure functions of an event's values.

#include "auditmodel.h"

#include <QString>
#include <QVariant>

namespace relctl::ui::auditcells {

QVariant display(const relctl::AuditEvent& e, AuditModel::Column column);
QVariant toolTip(const relctl::AuditEvent& e, AuditModel::Column column);
QString title(AuditModel::Column column);

// What was current when the event happened, in one cell: "release 1.4.2, generation 7, token 12".
QString current(const relctl::AuditEvent& e);

} // namespace relctl::ui::auditcells
