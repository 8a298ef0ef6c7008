#pragma once

#include "consoletypes.h"

#include <QDialog>

class QLineEdit;
class QPlainTextEdit;
class QPushButton;

namespace relctl::ui {

// The confirmation every operator action goes through: it names the action
// and the environment, and requires the operator's name and (except for
// approvals and unfreeze) a reason, which the audit trail records. `details`
// (rich text) says what the action changes, e.g. a rollback's manifest diff.
class ActionDialog final : public QDialog
{
    Q_OBJECT

public:
    ActionDialog(ConsoleAction action, const QString& description, QWidget* parent = nullptr,
                 const QString& details = {});

    ConsoleAction action() const;
    static bool reasonRequired(ConsoleAction::Kind kind);

private:
    void validate();

    ConsoleAction m_action;
    QLineEdit* m_operator;
    QPlainTextEdit* m_reason;
    QPushButton* m_confirm;
};

// The operator's name: from the settings, defaulting to the OS user.
QString operatorName();
void setOperatorName(const QString& name);

} // namespace relctl::ui
