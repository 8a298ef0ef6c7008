#pragma once

// What an operator action will do, said in the confirmation before it is
// made: whose lease ends and who goes next, whose publish a freeze refuses
// and who waits, which candidates an approval skips. Rich text built from
// what the console last read; the server decides again when the action runs.

#include "consoletypes.h"
#include "relctl/console.h"

#include <QString>

namespace relctl::ui {

QString revokeConsequences(const relctl::EnvironmentRow& env, qint64 now);
QString freezeConsequences(const relctl::EnvironmentRow& env);
QString unfreezeConsequences(const relctl::EnvironmentRow& env, qint64 now);
QString supersessionConsequences(const SupersessionRow& request, bool approve);

} // namespace relctl::ui
