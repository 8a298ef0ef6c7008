#include "tracepanel.h"

#include "icons.h"
#include "timeformat.h"

#include <QDateTime>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace relctl::ui {

namespace {

QString esc(const std::string& s)
{
    return QString::fromStdString(s).toHtmlEscaped();
}

QString esc(const std::optional<std::string>& s)
{
    return s ? esc(*s) : QStringLiteral("–");
}

QString num(const std::optional<std::int64_t>& n)
{
    return n ? QString::number(*n) : QStringLiteral("–");
}

QString when(relctl::EpochMs ms)
{
    return formatTime(ms, true);
}

QString lease(const relctl::LeaseSpan& l)
{
    return QObject::tr("token %1 · %2 (generation %3) · acquired %4 · until %5 (%6)")
        .arg(l.token)
        .arg(esc(l.release))
        .arg(l.generation)
        .arg(when(l.acquiredAt), when(l.endsAt), esc(l.ending));
}

} // namespace

TracePanel::TracePanel(QWidget* parent)
    : QWidget(parent), m_browser(new QTextBrowser(this)),
      m_show(new QPushButton(tr("Show on &timeline"), this))
{
    m_browser->setOpenExternalLinks(true);
    m_show->setIcon(consoleIcon(QStringLiteral("trace")));
    setFocusProxy(m_browser);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_browser);
    layout->addWidget(m_show);
    connect(m_show, &QPushButton::clicked, this, [this] {
        if (m_trace)
            emit showOnTimeline(m_trace->event.id, m_trace->event.at);
    });
    showNothing(tr("Select a refused write (red) in the audit browser or on the timeline."));
}

void TracePanel::showNothing(const QString& why)
{
    m_trace.reset();
    m_browser->setHtml(QStringLiteral("<p><i>%1</i></p>").arg(why.toHtmlEscaped()));
    m_show->setEnabled(false);
}

void TracePanel::showTrace(const std::optional<relctl::RefusalTrace>& trace)
{
    if (!trace) {
        showNothing(tr("The selected event was accepted: there is no refusal to trace."));
        return;
    }
    m_trace = trace;
    m_browser->setHtml(html(*trace));
    m_show->setEnabled(true);
}

QString TracePanel::text() const
{
    return m_browser->toPlainText();
}

QString TracePanel::html(const relctl::RefusalTrace& t)
{
    const relctl::AuditEvent& e = t.event;
    QString out = tr("<h3>%1 refused: %2</h3>").arg(esc(e.operation), esc(e.reason));
    out += tr("<p><b>Job</b> %1 · release %2 · generation %3 · token presented %4<br>"
              "host %5 · pid %6 · op id %7 · at %8</p>")
               .arg(esc(e.job), esc(e.release), num(e.generation), num(e.token), esc(e.host), num(e.pid),
                    esc(e.opId), when(e.at));
    if (e.jobUrl)
        out += QStringLiteral("<p><a href=\"%1\">%1</a></p>").arg(esc(*e.jobUrl));
    out += tr("<p><b>Its lease</b><br>%1</p>")
               .arg(t.lease ? lease(*t.lease) : tr("none (refused before a lease)"));
    if (t.supersededBy)
        out += tr("<p><b>Superseded by</b> job %1<br>%2<br>host %3 · pid %4%5</p>")
                   .arg(esc(t.supersededBy->job), lease(*t.supersededBy), esc(t.supersedingHost),
                        num(t.supersedingPid),
                        t.supersedingJobUrl
                            ? QStringLiteral(" · <a href=\"%1\">%1</a>").arg(esc(*t.supersedingJobUrl))
                            : QString());
    if (t.currentRelease)
        out +=
            tr("<p><b>Current manifest at that moment</b><br>%1 (generation %2), published by job %3 at %4 — "
               "%5 ms before the refusal</p>")
                .arg(esc(t.currentRelease), num(t.currentGeneration), esc(t.currentJob),
                     t.currentPublishedAt ? when(*t.currentPublishedAt) : QStringLiteral("–"),
                     num(t.publishedBeforeMs));
    else
        out += tr("<p><b>Current manifest at that moment</b><br>nothing was published yet</p>");
    return out;
}

} // namespace relctl::ui
