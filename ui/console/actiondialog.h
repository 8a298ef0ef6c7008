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

// The operator's name, which the audit trail records beside the login: the
// name last accepted by the server (kept in the settings), else the
// console's login, else the OS user.
QString operatorName();
// Keeps `name` as the operator's name. Called only once the server accepted
// an action under it (ConsoleSession::actionSucceeded), or when the operator
// sets it deliberately (the toolbar's "Acting as"): a name that was refused,
// a requester's typed by mistake say, must not become the default.
void setOperatorName(const QString& name);
// The database login the console is connected as (empty when not
// connected): the name's default, and what every confirmation says will be
// recorded.
void setConnectedLogin(const QString& login);
QString connectedLogin();

} // namespace relctl::ui
