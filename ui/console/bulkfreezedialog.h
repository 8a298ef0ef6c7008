#pragma once

// The confirmation of a freeze or unfreeze of many environments at once
// ("every prod for the holiday"): every environment that will change listed
// before anything is sent, those already as asked apart, one reason for all,
// and the login the trail will record.

#include "consoletypes.h"

#include <QDialog>
#include <QStringList>

class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;

namespace relctl::ui {

class BulkFreezeDialog final : public QDialog
{
    Q_OBJECT

public:
    // kind: FreezeMany or UnfreezeMany. change: the environments it will
    // change; unchanged: those selected that are already frozen (unfrozen).
    BulkFreezeDialog(ConsoleAction::Kind kind, const QStringList& change, const QStringList& unchanged,
                     QWidget* parent = nullptr);

    // The action confirmed: envs are the environments that change.
    ConsoleAction action() const;
    QListWidget* changeList() const { return m_change; }
    QListWidget* unchangedList() const { return m_unchanged; }
    QPushButton* confirmButton() const { return m_confirm; }

private:
    void validate();

    ConsoleAction m_action;
    QListWidget* m_change;
    QListWidget* m_unchanged;
    QLineEdit* m_operator;
    QPlainTextEdit* m_reason;
    QPushButton* m_confirm = nullptr;
};

} // namespace relctl::ui
