#include "rehearsalsview.h"

#include "icons.h"

#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace relctl::ui {

RehearsalsView::RehearsalsView(QWidget* parent) : QWidget(parent)
{
    auto* text = new QTextBrowser(this);
    text->setObjectName(QStringLiteral("rehearsalsText"));
    text->setOpenLinks(false);
    text->setHtml(
        tr("<h3>Rehearsals are not available yet</h3>"
           "<p>A rehearsal plays a race-and-expiry scenario against a scratch database, never a real "
           "environment: two releases race for the lease, the older one stalls until its lease expires, "
           "and the rehearsal proves that the old holder's late publish is refused with its fencing "
           "token and traced in the audit trail.</p>"
           "<p>The console runs rehearsals once the rehearsal engine exists; nothing here can start one "
           "today.</p>"
           "<p><b>Today</b>, the same scenario runs from a clone of relctl, on a throwaway PostgreSQL "
           "cluster that is removed afterwards:</p>"
           "<pre>bash scripts/demo.sh</pre>"
           "<p>It drives <code>relctl lease acquire</code>, <code>lease renew</code> and "
           "<code>publish</code> step by step and shows the refusal and its trace.</p>"));
    // Disabled, with the reason on it: the place the engine's entry point takes.
    auto* start = new QPushButton(tr("Start a rehearsal…"), this);
    start->setObjectName(QStringLiteral("startRehearsal"));
    start->setIcon(consoleIcon(QStringLiteral("rehearsal")));
    start->setEnabled(false);
    start->setToolTip(tr("Arrives with the rehearsal engine."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(text);
    layout->addWidget(start, 0, Qt::AlignLeft);
    setFocusProxy(text);
}

} // namespace relctl::ui
