#include "tracepanel.h"

#include "icons.h"
#include "relctl/replies.h"
#include "timeformat.h"

#include <QClipboard>
#include <QDateTime>
#include <QDesktopServices>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

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

QString when(relctl::Timestamp at)
{
    return formatTime(at, true);
}

QString lease(const relctl::LeaseSpan& l)
{
    return QObject::tr("token %1 · %2 (generation %3) · acquired %4 · until %5 (%6)")
        .arg(l.token)
        .arg(esc(l.release))
        .arg(l.generation)
        .arg(when(l.acquiredAt), when(l.endsAt), esc(l.ending));
}

QString duration(const std::optional<std::int64_t>& ms)
{
    if (!ms)
        return QStringLiteral("–");
    return formatDuration(std::max<std::int64_t>(*ms, 0));
}

// What a promotion gate saw when it refused, in words: what was missing and
// who decided. Only what the refusal recorded is used (see console_trace).
QString gateHtml(const relctl::Event& e, const relctl::PromotionGate& g)
{
    const std::string reason = e.reason.value_or(std::string());
    const QString candidate = QObject::tr("%1 (generation %2)").arg(esc(e.release), num(e.generation));
    const QString upstream = esc(g.upstreamEnv);
    QString out;
    if (reason == "NOT_PROMOTED") {
        if (!g.upstreamAcceptedAt)
            out += QObject::tr("<p><b>Not promoted</b>: %1 is promoted from %2, and %2 had not accepted "
                               "%3 (never, or a rollback there withdrew it). %2 had %4.</p>")
                       .arg(esc(e.env), upstream, candidate,
                            g.upstreamRelease ? QObject::tr("%1 (generation %2) current")
                                                    .arg(esc(g.upstreamRelease), num(g.upstreamGeneration))
                                              : QObject::tr("nothing current"));
        else
            out += QObject::tr("<p><b>Not promoted yet</b>: %1 was accepted on %2 at %3, but %4 needs a soak "
                               "of %5 there: it had soaked %6, %7 to go.</p>")
                       .arg(candidate, upstream, when(*g.upstreamAcceptedAt), esc(e.env), duration(g.soakMs),
                            duration(g.soakedMs), duration(g.soakRemainingMs));
        out += QObject::tr("<p>What was missing: acceptance upstream, not an approval; no approval can "
                           "make up for it.</p>");
    } else if (reason == "APPROVAL_REQUIRED") {
        const auto given = g.approvedBy ? static_cast<std::int64_t>(g.approvedBy->size()) : 0;
        QStringList names;
        for (const std::string& by : g.approvedBy.value_or(std::vector<std::string>{}))
            names << esc(by);
        out += QObject::tr("<p><b>Approval required</b>: promoting %1 to %2 needs %3 approval(s) from "
                           "distinct logins; %4 had been given%5.</p>")
                   .arg(candidate, esc(e.env), num(g.approvalsRequired))
                   .arg(given)
                   .arg(names.isEmpty()
                            ? QString()
                            : QStringLiteral(" (") + names.join(QStringLiteral(", ")) + QStringLiteral(")"));
        out += g.promotion ? QObject::tr("<p>What was missing: %1 more approval(s) on promotion request #%2 "
                                         "(Promotions view, or relctl promote approve %2).</p>")
                                 .arg(g.approvalsRequired ? QString::number(*g.approvalsRequired - given)
                                                          : QStringLiteral("–"))
                                 .arg(*g.promotion)
                           : QObject::tr("<p>What was missing: a promotion request and its approvals (relctl "
                                         "promote request opens one).</p>");
    } else if (reason == "APPROVAL_DENIED") {
        out += QObject::tr("<p><b>Approval denied</b>: promoting %1 to %2 was denied by <b>%3</b>%4: "
                           "%5</p><p>A denial is final for this release and generation (request #%6); a "
                           "newer generation needs a request of its own.</p>")
                   .arg(candidate, esc(e.env), esc(g.deniedBy),
                        g.deniedAt ? QObject::tr(" at %1").arg(when(*g.deniedAt)) : QString(),
                        esc(g.denialReason), num(g.promotion));
    } else if (reason == "SELF_APPROVAL") {
        out += QObject::tr("<p><b>Self-approval</b>: %1 requested promotion #%2 and cannot approve it; "
                           "another person, with a login of their own, must.</p>")
                   .arg(QString::fromStdString(
                            relctl::actorWithLogin(g.requestedBy.value_or("–"), g.requestedLogin))
                            .toHtmlEscaped(),
                        num(g.promotion));
    } else if (reason == "NOT_APPROVER") {
        out += QObject::tr("<p><b>Not an approver</b>: login %1 is not a member of <b>%2</b>, the only role "
                           "whose members may decide %3's approvals.</p>")
                   .arg(esc(e.dbUser.value_or("–")), esc(g.approverRole), esc(e.env));
    } else if (reason == "DUPLICATE_APPROVAL") {
        out +=
            QObject::tr("<p><b>Counted once</b>: %1 already decided request #%2; each login decides "
                        "once, whatever name it gives.</p>")
                .arg(QString::fromStdString(relctl::actorWithLogin(g.decidedBy.value_or("–"), g.decidedLogin))
                         .toHtmlEscaped(),
                     num(g.promotion));
    }
    return out;
}

QString link(const std::string& url)
{
    return QStringLiteral("<a href=\"%1\">%1</a>").arg(esc(url));
}

// The cause in a sentence, as the server phrased it, capitalised.
QString sentence(const std::string& summary)
{
    QString s = QString::fromStdString(summary);
    if (!s.isEmpty())
        s[0] = s[0].toUpper();
    return s.toHtmlEscaped() + QLatin1Char('.');
}

// What decided the refusal: the server's sentence, then when and, for the
// winner or newer holder, where it ran.
QString causeHtml(const relctl::TraceCause& c)
{
    QString out = QObject::tr("<p><b>Why:</b> %1</p>").arg(sentence(c.summary));
    QStringList facts;
    if (c.by)
        facts << QObject::tr("decided by <b>%1</b>").arg(esc(c.by));
    if (c.at)
        facts << QObject::tr("at %1").arg(when(*c.at));
    if (c.host || c.pid)
        facts << QObject::tr("%1 ran on host %2 · pid %3").arg(esc(c.job), esc(c.host), num(c.pid));
    if (c.jobUrl)
        facts << link(*c.jobUrl);
    if (!facts.isEmpty())
        out += QStringLiteral("<p>") + facts.join(QStringLiteral(" · ")) + QStringLiteral("</p>");
    return out;
}

} // namespace

TracePanel::TracePanel(QWidget* parent)
    : QWidget(parent), m_browser(new QTextBrowser(this)), m_notice(new QLabel(this)),
      m_show(new QPushButton(tr("Show on &timeline"), this)), m_copy(new QPushButton(tr("Copy trace"), this)),
      m_openUrl([](const QUrl& url) { return QDesktopServices::openUrl(url); })
{
    // Links are opened here, not by the browser, so that a machine without a
    // browser still gives the reviewer the URL (on the clipboard).
    m_browser->setOpenLinks(false);
    connect(m_browser, &QTextBrowser::anchorClicked, this, &TracePanel::openLink);
    m_notice->setObjectName(QStringLiteral("traceNotice"));
    m_notice->setWordWrap(true);
    m_notice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notice->hide();
    m_show->setIcon(consoleIcon(QStringLiteral("trace")));
    setFocusProxy(m_browser);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_browser);
    layout->addWidget(m_notice);
    m_copy->setObjectName(QStringLiteral("copyTrace"));
    m_copy->setToolTip(tr("Copies this trace as plain text, for an incident write-up"));
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_show);
    buttons->addWidget(m_copy);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    connect(m_copy, &QPushButton::clicked, this, &TracePanel::copyTrace);
    connect(m_show, &QPushButton::clicked, this, [this] {
        if (m_trace)
            emit showOnTimeline(m_trace->event.id, m_trace->event.at.millis());
    });
    showNothing(tr("Select a refused write (red) in the audit browser or on the timeline."));
}

void TracePanel::setUrlOpener(std::function<bool(const QUrl&)> open)
{
    m_openUrl = std::move(open);
}

void TracePanel::openLink(const QUrl& url)
{
    if (m_openUrl(url)) {
        m_notice->hide();
        return;
    }
    QGuiApplication::clipboard()->setText(url.toString());
    m_notice->setText(
        tr("No browser could open the link; it was copied to the clipboard: %1").arg(url.toString()));
    m_notice->show();
}

QString TracePanel::notice() const
{
    return m_notice->isHidden() ? QString() : m_notice->text();
}

void TracePanel::showNothing(const QString& why)
{
    m_trace.reset();
    m_notice->hide();
    m_browser->setHtml(QStringLiteral("<p><i>%1</i></p>").arg(why.toHtmlEscaped()));
    m_show->setEnabled(false);
    m_copy->setEnabled(false);
}

void TracePanel::showTrace(const std::optional<relctl::RefusalTrace>& trace)
{
    if (!trace) {
        showNothing(tr("The selected event was accepted: there is no refusal to trace."));
        return;
    }
    m_trace = trace;
    m_notice->hide();
    m_browser->setHtml(html(*trace));
    m_show->setEnabled(true);
    m_copy->setEnabled(true);
}

QString TracePanel::text() const
{
    return m_browser->toPlainText();
}

void TracePanel::copyTrace()
{
    if (!m_trace)
        return;
    // Plain text only: pasted into a ticket or a chat, HTML would arrive as
    // markup or in the panel's fonts. One line per paragraph or line break.
    QGuiApplication::clipboard()->setText(text().trimmed() + QLatin1Char('\n'));
}

QString TracePanel::html(const relctl::RefusalTrace& t)
{
    const relctl::Event& e = t.event;
    QString out = tr("<h3>%1 on %2 refused: %3</h3>").arg(esc(e.operation), esc(e.env), esc(e.reason));
    // The cause first (the winner and the approval, the operator and why, the
    // publish that set the bar); a gate's refusal is explained by the gate.
    // The lease and the manifest below are the same for any refusal.
    if (t.cause)
        out += causeHtml(*t.cause);
    if (t.gate)
        out += gateHtml(e, *t.gate);
    if (e.actor)
        out += tr("<p><b>By</b> %1</p>").arg(esc(e.actor));
    out += tr("<p><b>Job</b> %1 · release %2 · generation %3 · token presented %4<br>"
              "host %5 · pid %6 · op id %7 · at %8</p>")
               .arg(esc(e.job), esc(e.release), num(e.generation), num(e.token), esc(e.host), num(e.pid),
                    esc(e.opId), when(e.at));
    if (e.jobUrl)
        out += QStringLiteral("<p>%1</p>").arg(link(*e.jobUrl));
    out += tr("<p><b>Its lease</b><br>%1</p>")
               .arg(t.lease ? lease(*t.lease) : tr("none (refused before a lease)"));
    // The lease that held the environment when the refusal happened. A
    // queued candidate skipped for a newer one was not beaten by that lease
    // but by the winner the cause names, so it is not shown as "superseded by".
    const bool skipped = t.cause && t.cause->kind == "superseded";
    if (t.supersededBy && !skipped)
        out += tr("<p><b>Holding %1 at that moment</b>: job %2<br>%3<br>host %4 · pid %5%6</p>")
                   .arg(esc(e.env), esc(t.supersededBy->job), lease(*t.supersededBy), esc(t.supersedingHost),
                        num(t.supersedingPid),
                        t.supersedingJobUrl ? QStringLiteral(" · ") + link(*t.supersedingJobUrl) : QString());
    if (t.currentRelease)
        out +=
            tr("<p><b>Current manifest at that moment</b><br>%1 (generation %2), published by job %3 at %4 — "
               "%5 before the refusal</p>")
                .arg(esc(t.currentRelease), num(t.currentGeneration), esc(t.currentJob),
                     t.currentPublishedAt ? when(*t.currentPublishedAt) : QStringLiteral("–"),
                     duration(t.publishedBeforeMs));
    else
        out += tr("<p><b>Current manifest at that moment</b><br>nothing was published yet</p>");
    return out;
}

} // namespace relctl::ui
