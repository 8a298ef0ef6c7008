#include "consequences.h"

#include "timeformat.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>

namespace relctl::ui {

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("Consequences", text);
}

QString esc(const std::string& s)
{
    return QString::fromStdString(s).toHtmlEscaped();
}

QString esc(const std::optional<std::string>& s)
{
    return s ? esc(*s) : QStringLiteral("–");
}

QString candidate(const relctl::QueuedCandidate& c)
{
    return tr("job <b>%1</b> (%2, generation %3)").arg(esc(c.job), esc(c.release)).arg(c.generation);
}

// The queue as a list, in serving order; at most `limit` named.
QString queueList(const std::vector<relctl::QueuedCandidate>& queue, std::size_t limit = 8)
{
    QStringList items;
    for (std::size_t i = 0; i < queue.size() && i < limit; ++i)
        items << QStringLiteral("<li>%1</li>").arg(candidate(queue[i]));
    if (queue.size() > limit)
        items << tr("<li>and %1 more</li>").arg(queue.size() - limit);
    return QStringLiteral("<ol>") + items.join(QString()) + QStringLiteral("</ol>");
}

QString holder(const relctl::EnvironmentRow& e)
{
    return tr("job <b>%1</b> (%2, generation %3, fencing token %4)")
        .arg(esc(e.holderJob), esc(e.holderRelease),
             e.holderGeneration ? QString::number(*e.holderGeneration) : QStringLiteral("–"),
             e.holderToken ? QString::number(*e.holderToken) : QStringLiteral("–"));
}

} // namespace

QString revokeConsequences(const relctl::EnvironmentRow& e, qint64 now)
{
    if (!e.holderJob)
        return tr("<p>%1 has no live lease as last read: nothing will be revoked.</p>").arg(esc(e.name));
    QString out = tr("<p>Ends the lease of %1 at once.").arg(holder(e));
    if (e.holderAcquiredAt)
        out += tr(" It has held %1 for <b>%2</b>")
                   .arg(esc(e.name), formatDuration(std::max<qint64>(0, now - e.holderAcquiredAt->millis())));
    if (e.leaseExpiresAt)
        out += e.leaseExpiresAt->millis() > now
                   ? tr(" and would expire in %1.").arg(formatDuration(e.leaseExpiresAt->millis() - now))
                   : tr(" and is expiring now.");
    else
        out += QLatin1Char('.');
    out += tr("</p><p>Its next renew or publish is refused <b>LEASE_REVOKED</b>; a <code>relctl run</code> "
              "wrapper then stops its command. Work the job already started outside relctl is not "
              "stopped by this.</p>");
    if (e.frozen)
        out += tr("<p>%1 is frozen: nobody takes the lease until it is unfrozen.</p>").arg(esc(e.name));
    else if (e.queue.empty())
        out += tr("<p>Nobody is waiting: %1 stays free.</p>").arg(esc(e.name));
    else
        out += tr("<p>Next in the queue: %1.</p>").arg(candidate(e.queue.front()));
    return out;
}

QString freezeConsequences(const relctl::EnvironmentRow& e)
{
    QString out = tr("<p>While %1 is frozen, every acquisition and publish on it is refused "
                     "<b>DISPATCH_FROZEN</b>; renewals and releases still work.</p>")
                      .arg(esc(e.name));
    if (e.holderJob)
        out +=
            tr("<p>The live holder, %1, keeps its lease but its publish will be refused.</p>").arg(holder(e));
    else
        out += tr("<p>No lease is live.</p>");
    if (e.queue.empty())
        out += tr("<p>Nobody is waiting.</p>");
    else
        out +=
            tr("<p>%1 queued candidate(s) will wait until it is unfrozen, then resume in policy order:</p>")
                .arg(e.queue.size()) +
            queueList(e.queue);
    return out;
}

QString unfreezeConsequences(const relctl::EnvironmentRow& e, qint64 now)
{
    QString out = tr("<p>Lifts the freeze on %1").arg(esc(e.name));
    if (e.frozenBy)
        out += tr(" by <b>%1</b>").arg(esc(e.frozenBy));
    if (e.frozenReason)
        out += tr(" (\"%1\")").arg(esc(e.frozenReason));
    if (e.frozenAt)
        out += tr(", in force for %1").arg(formatDuration(std::max<qint64>(0, now - e.frozenAt->millis())));
    out += tr(": acquisitions and publishes are accepted again.</p>");
    if (e.queue.empty())
        out += tr("<p>Nobody is waiting.</p>");
    else
        out += tr("<p>%1 queued candidate(s) resume in policy order; first %2.</p>")
                   .arg(e.queue.size())
                   .arg(candidate(e.queue.front()));
    return out;
}

QString supersessionConsequences(const SupersessionRow& request, bool approve)
{
    const QString winner = tr("job <b>%1</b> (%2, generation %3)")
                               .arg(request.winnerJob.toHtmlEscaped(), request.winnerRelease.toHtmlEscaped())
                               .arg(request.winnerGeneration);
    QStringList skipped;
    for (const QString& s : request.skipped)
        skipped << QStringLiteral("<li>%1</li>").arg(s.toHtmlEscaped());
    const QString list = QStringLiteral("<ul>") + skipped.join(QString()) + QStringLiteral("</ul>");
    if (approve)
        return tr("<p>%1 goes next on <b>%2</b>. These candidates are refused <b>SUPERSEDED</b> and leave "
                  "the queue (%3):</p>")
                   .arg(winner, request.env.toHtmlEscaped())
                   .arg(request.skipped.size()) +
               list;
    return tr("<p>The queue of <b>%1</b> stays in generation order: these candidates adopt before %2, "
              "which waits its turn (%3):</p>")
               .arg(request.env.toHtmlEscaped(), winner)
               .arg(request.skipped.size()) +
           list;
}

} // namespace relctl::ui
