#pragma once

// Clicking through the console's confirmations in a widget test: the
// operator actions open a modal ActionDialog (exec()'d), so the answer has to
// come from inside its event loop.

#include "actiondialog.h"

#include <QAbstractButton>
#include <QApplication>
#include <QDialogButtonBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextDocument>
#include <QTimer>
#include <memory>

// A button of `parent` by its visible text (without the mnemonic's "&").
template <typename Button> inline Button* button(QWidget* parent, const QString& text)
{
    for (Button* b : parent->findChildren<Button*>())
        if (b->text().remove(QLatin1Char('&')).startsWith(text))
            return b;
    return nullptr;
}

// Answers the next confirmation (modal, exec()'d by the view) from inside
// its event loop: fills in the operator and the reason, then clicks the
// confirm button, so a confirmation that refuses to proceed (say, a reason
// missing) is not answered. The result tells whether it was.
// (Found among the top-level widgets: offscreen, no window is ever active.)
// `shown`, when given, receives what the confirmation said the action will
// do (its details, as plain text) and its title.
inline std::shared_ptr<bool> confirmNextAction(const QString& by, const QString& reason,
                                               const std::shared_ptr<QString>& shown = {})
{
    auto answered = std::make_shared<bool>(false);
    auto* timer = new QTimer;
    auto deadline = std::make_shared<QElapsedTimer>();
    deadline->start();
    QObject::connect(timer, &QTimer::timeout, timer, [timer, answered, deadline, by, reason, shown] {
        for (QWidget* w : QApplication::topLevelWidgets()) {
            auto* dialog = qobject_cast<relctl::ui::ActionDialog*>(w);
            if (!dialog || !dialog->isVisible())
                continue;
            if (shown) {
                QTextDocument doc;
                if (auto* details = dialog->findChild<QLabel*>(QStringLiteral("actionDetails")))
                    doc.setHtml(details->text());
                *shown = dialog->windowTitle() + QLatin1Char('\n') + doc.toPlainText();
            }
            if (!by.isEmpty())
                dialog->findChild<QLineEdit*>()->setText(by);
            dialog->findChild<QPlainTextEdit*>()->setPlainText(reason);
            QPushButton* confirm = dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
            *answered = confirm->isEnabled();
            if (*answered)
                confirm->click();
            else
                dialog->reject();
            timer->deleteLater();
            return;
        }
        if (deadline->elapsed() > 10000)
            timer->deleteLater();
    });
    timer->start(10);
    return answered;
}
