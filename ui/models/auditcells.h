#pragma once

// How an audit event reads in the audit browser's cells, tooltips and
// headers: the formatting half of AuditModel, kept apart from its paging and
// live updates. Pure functions of an event's values.

#include "auditmodel.h"

#include <QString>
#include <QVariant>
#include <vector>

namespace relctl::ui::auditcells {

QVariant display(const relctl::Event& e, AuditModel::Column column);
QVariant toolTip(const relctl::Event& e, AuditModel::Column column);
QString title(AuditModel::Column column);

// An event's detail (compact JSON) as one line a person reads: each value
// after its key, nested keys joined with "." as the manifest diff does,
// arrays of plain values listed, times as the console shows them, nulls
// left out, an operator's reason first and the other keys in the order
// they came: "reason: canary failed · frozen_by: alice". Text that is not
// JSON is returned as it is.
QString readableDetail(const std::string& json);
// A string the server wrote into a detail or evidence: a moment
// (frozen_at, expires_at) reads like every other time in the console, any
// other string is itself.
QString readableText(const std::string& s);
// Events as an incident write-up pastes them: a header line of the
// columns' titles, then one line per event, the cells as the table shows
// them, separated by tabs (a spreadsheet or a document's table takes it).
QString tabSeparated(const std::vector<const relctl::Event*>& events);
// The same detail in full, indented, for its tooltip.
QString fullDetail(const std::string& json);

// What was current when the event happened, in one cell: "release 1.4.2, generation 7, token 12".
QString current(const relctl::Event& e);

} // namespace relctl::ui::auditcells
