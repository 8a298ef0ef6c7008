#include "promotionsview.h"

#include "actiondialog.h"
#include "environmentsmodel.h"
#include "icons.h"
#include "manifestdiff.h"
#include "manifesthistorymodel.h"
#include "timeformat.h"

#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QSet>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>
#include <map>

namespace relctl::ui {

namespace {

QString q(const std::string& s)
{
    return QString::fromStdString(s);
}

QString esc(const std::string& s)
{
    return q(s).toHtmlEscaped();
}

QString duration(std::int64_t ms)
{
    return ms <= 0 ? QStringLiteral("0s") : EnvironmentsModel::formatCountdown(ms);
}

// "v1.13 (generation 13)" from a {release, generation} object, or "nothing".
QString releaseOf(const nlohmann::json& current)
{
    if (!current.is_object() || !current.contains("release"))
        return QObject::tr("nothing");
    return QObject::tr("%1 (generation %2)")
        .arg(q(current.value("release", std::string())))
        .arg(current.value("generation", std::int64_t{0}));
}

// A decision's person as relctl shows it everywhere: the name, and the login
// behind it when the two differ.
QString who(const std::string& by, const std::optional<std::string>& login)
{
    return q(relctl::actorWithLogin(by, login));
}

QString approvers(const relctl::Promotion& p)
{
    QStringList names;
    for (const relctl::PromotionVote& v : p.approvals)
        names << who(v.by, v.login);
    return names.join(QStringLiteral(", "));
}

// Approvals counted: one per login (a schema before migration 0012 sends no
// count, and counted names).
std::int64_t approvalsGiven(const relctl::Promotion& p)
{
    return p.approvalsGiven.value_or(static_cast<std::int64_t>(p.approvals.size()));
}

} // namespace

PromotionsView::PromotionsView(QWidget* parent)
    : QWidget(parent), m_paths(new QLabel(this)), m_list(new QListWidget(this)),
      m_details(new QTextBrowser(this)), m_approve(new QPushButton(tr("&Approve…"), this)),
      m_deny(new QPushButton(tr("&Deny…"), this))
{
    m_paths->setObjectName(QStringLiteral("promotionPaths"));
    m_paths->setTextFormat(Qt::RichText);
    m_paths->setWordWrap(true);
    m_list->setObjectName(QStringLiteral("promotionRequests"));
    m_details->setObjectName(QStringLiteral("promotionDetails"));
    m_approve->setIcon(consoleIcon(QStringLiteral("approve")));
    m_deny->setIcon(consoleIcon(QStringLiteral("deny")));
    setFocusProxy(m_list);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_approve);
    buttons->addWidget(m_deny);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_paths);
    layout->addWidget(m_list, 1);
    layout->addWidget(m_details, 3);
    layout->addLayout(buttons);
    connect(m_approve, &QPushButton::clicked, this, [this] { decide(true); });
    connect(m_deny, &QPushButton::clicked, this, [this] { decide(false); });
    connect(m_list, &QListWidget::currentRowChanged, this, [this] {
        updateButtons();
        showDetails();
    });
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &PromotionsView::showDetails);
    m_readAt.start();
    setPromotions({});
}

void PromotionsView::setPromotions(const PromotionsSnapshot& snapshot)
{
    // Live reloads keep the request the operator is reading selected.
    const relctl::Promotion* was = selected();
    const std::int64_t keep = was ? was->id : 0;
    m_snapshot = snapshot;
    m_readAt.restart();
    m_paths->setText(pathsHtml(snapshot.environments));
    const QSignalBlocker quiet(m_list);
    m_list->clear();
    int current = -1;
    for (const relctl::Promotion& p : snapshot.promotions) {
        if (p.id == keep)
            current = m_list->count();
        m_list->addItem(tr("#%1 %2 ← %3 (generation %4) · asked by %5 · %6 of %7 approvals")
                            .arg(p.id)
                            .arg(q(p.env), q(p.release))
                            .arg(p.generation)
                            .arg(who(p.requestedBy, p.requestedLogin))
                            .arg(approvalsGiven(p))
                            .arg(p.approvalsRequired));
    }
    // The placeholder cannot be selected, but the list stays enabled so the
    // keyboard can still reach the view.
    if (snapshot.promotions.empty()) {
        m_list->addItem(tr("No promotion request awaits a decision."));
        m_list->item(0)->setFlags(Qt::NoItemFlags);
    }
    m_list->setCurrentRow(current);
    updateButtons();
    showDetails();
}

void PromotionsView::setSchemaVersion(int version)
{
    m_schemaVersion = version;
    updateButtons();
}

void PromotionsView::setLogin(const QString& login)
{
    m_login = login;
    updateButtons();
}

int PromotionsView::count() const
{
    return static_cast<int>(m_snapshot.promotions.size());
}

QString PromotionsView::pathsText() const
{
    QTextDocument doc;
    doc.setHtml(m_paths->text());
    return doc.toPlainText();
}

QString PromotionsView::detailsText() const
{
    return m_details->toPlainText();
}

const relctl::Promotion* PromotionsView::selected() const
{
    const int row = m_list->currentRow();
    if (row < 0 || row >= count())
        return nullptr;
    return &m_snapshot.promotions[static_cast<std::size_t>(row)];
}

void PromotionsView::updateButtons()
{
    const bool supported = m_schemaVersion >= kPromotionsSchemaVersion;
    const relctl::Promotion* p = selected();
    // Whose request it is is a matter of logins (the protocol refuses the
    // requester's login, SELF_APPROVAL), and of the name typed as well.
    const QString me = operatorName();
    const bool ownLogin = p && p->requestedLogin && !m_login.isEmpty() && q(*p->requestedLogin) == m_login;
    const bool own = p && (ownLogin || q(p->requestedBy) == me);
    // An approval counts once per login: this login's own is already in.
    const relctl::PromotionVote* mine = nullptr;
    if (p && !m_login.isEmpty())
        for (const relctl::PromotionVote& v : p->approvals)
            if (v.login && q(*v.login) == m_login)
                mine = &v;
    const QString why = !supported ? tr("The database's relctl schema (version %1) predates promotions: "
                                        "run relctl migrate.")
                                         .arg(m_schemaVersion)
                        : !p ? tr("Select a request first.")
                             : QString();
    m_deny->setEnabled(supported && p);
    m_deny->setToolTip(why);
    m_approve->setEnabled(supported && p && !own && !mine);
    m_approve->setToolTip(!why.isEmpty() ? why
                          : ownLogin     ? tr("Your login (%1) requested this promotion: someone else, "
                                                  "with a login of their own, must approve it.")
                                           .arg(m_login)
                          : own
                              ? tr("You (%1) requested this promotion: someone else must approve it.").arg(me)
                          : mine ? tr("Your login (%1) already approved this request as %2: one login counts "
                                      "once.")
                                       .arg(m_login, q(mine->by))
                                 : QString());
}

void PromotionsView::showDetails()
{
    const relctl::Promotion* p = selected();
    if (!p) {
        m_tick.stop();
        m_details->setHtml(QStringLiteral("<p><i>%1</i></p>")
                               .arg(tr("Select a promotion request to see where it stands upstream, its "
                                       "approvals and what its manifest changes.")));
        return;
    }
    const int scroll = m_details->verticalScrollBar() ? m_details->verticalScrollBar()->value() : 0;
    m_details->setHtml(detailsHtml(*p, m_readAt.elapsed()));
    if (m_details->verticalScrollBar())
        m_details->verticalScrollBar()->setValue(scroll);
    // Tick only while a soak is running: otherwise nothing moves.
    const bool soaking = p->upstream && p->upstream->soakRemainingMs.value_or(0) > m_readAt.elapsed();
    if (soaking && !m_tick.isActive())
        m_tick.start();
    else if (!soaking)
        m_tick.stop();
}

QString PromotionsView::pathsHtml(const std::vector<relctl::Environment>& environments)
{
    std::map<std::string, const relctl::Environment*> byName;
    QSet<QString> upstreams;
    for (const relctl::Environment& e : environments) {
        byName[e.name] = &e;
        if (e.promoteFrom)
            upstreams.insert(q(*e.promoteFrom));
    }
    const auto step = [](const relctl::Environment& e) {
        QString out = QStringLiteral("<b>%1</b> ").arg(esc(e.name));
        out += e.current ? tr("%1 (gen %2)").arg(esc(e.current->release)).arg(e.current->generation)
                         : tr("nothing yet");
        QStringList rules;
        if (e.soakMs > 0)
            rules << tr("soak %1").arg(duration(e.soakMs));
        if (e.approvalsRequired > 0)
            rules << tr("%n approval(s)", nullptr, static_cast<int>(e.approvalsRequired));
        if (e.frozen)
            rules << tr("frozen");
        if (!rules.isEmpty())
            out += QStringLiteral(" <small>[%1]</small>").arg(rules.join(QStringLiteral(", ")));
        return out;
    };
    // One line per path, from each environment nothing is promoted from (the
    // end of a path) back to its start; a cycle (which the protocol should
    // not allow) stops at the first repeat.
    QStringList lines;
    for (const relctl::Environment& e : environments) {
        if (!e.promoteFrom || upstreams.contains(q(e.name)))
            continue;
        QStringList chain;
        QSet<QString> seen;
        for (const relctl::Environment* at = &e; at && !seen.contains(q(at->name));) {
            seen.insert(q(at->name));
            chain.prepend(step(*at));
            const auto up = at->promoteFrom ? byName.find(*at->promoteFrom) : byName.end();
            at = up == byName.end() ? nullptr : up->second;
        }
        lines << chain.join(QStringLiteral(" &nbsp;→&nbsp; "));
    }
    if (lines.isEmpty())
        return tr(
            "<i>No environment is promoted from another (relctl env set ENV --promote-from UPSTREAM).</i>");
    return tr("<b>Paths</b><br>") + lines.join(QStringLiteral("<br>"));
}

QString PromotionsView::detailsHtml(const relctl::Promotion& p, qint64 elapsedMs)
{
    QString out =
        tr("<h3>Promote %1 (generation %2) to %3</h3>").arg(esc(p.release)).arg(p.generation).arg(esc(p.env));
    out += tr("<p>Request #%1 (%2), asked by <b>%3</b> at %4%5</p>")
               .arg(p.id)
               .arg(esc(p.state), who(p.requestedBy, p.requestedLogin).toHtmlEscaped(),
                    formatTime(p.requestedAt), p.reason ? QStringLiteral(": ") + esc(*p.reason) : QString());

    if (const auto& up = p.upstream) {
        if (up->acceptedAt) {
            const std::int64_t soaked = up->soakedMs.value_or(0) + elapsedMs;
            const std::int64_t left = std::max<std::int64_t>(0, up->soakRemainingMs.value_or(0) - elapsedMs);
            out += tr("<p><b>Upstream</b>: accepted on %1 at %2; soaked %3 of %4 — %5</p>")
                       .arg(esc(up->env), formatTime(*up->acceptedAt), duration(soaked), duration(up->soakMs),
                            left > 0 ? tr("<b>%1 to go</b>").arg(duration(left)) : tr("soak passed"));
        } else {
            out += tr("<p><b>Upstream</b>: <font color=\"#b03a2e\">not accepted on %1</font> (never, or "
                      "withdrawn by a rollback there); %1 has %2. A job would be refused NOT_PROMOTED.</p>")
                       .arg(esc(up->env), releaseOf(up->current));
        }
    } else {
        out += tr("<p><b>Upstream</b>: %1 is not promoted from another environment.</p>").arg(esc(p.env));
    }

    const std::int64_t given = approvalsGiven(p);
    out += tr("<p><b>Approvals</b>: %1 of %2%3%4</p>")
               .arg(given)
               .arg(p.approvalsRequired)
               .arg(p.approverRole ? tr(", from members of %1").arg(esc(*p.approverRole)) : QString())
               .arg(!p.approvals.empty() ? QStringLiteral(" — ") + approvers(p).toHtmlEscaped()
                                         : tr(" — none yet"));
    if (p.denial)
        out +=
            tr("<p><b>Denied</b> by %1: %2</p>")
                .arg(who(p.denial->by, p.denial->login).toHtmlEscaped(), esc(p.denial->reason.value_or("")));

    out += tr("<p><b>Current on %1</b>: %2</p>").arg(esc(p.env), releaseOf(p.current));
    if (p.candidateManifest.is_null()) {
        out += tr("<p><i>The candidate's manifest is not known here: the upstream has not accepted "
                  "it.</i></p>");
    } else {
        const nlohmann::json now =
            p.current.is_object() ? p.current.value("manifest", nlohmann::json()) : nlohmann::json();
        out +=
            tr("<p><b>Manifest changes</b></p>") + manifestDiffHtml(diffManifests(now, p.candidateManifest),
                                                                    tr("%1 now").arg(q(p.env)), q(p.release));
    }
    return out;
}

void PromotionsView::decide(bool approve)
{
    const relctl::Promotion* p = selected();
    if (!p)
        return;
    ConsoleAction action;
    action.kind = approve ? ConsoleAction::Kind::ApprovePromotion : ConsoleAction::Kind::DenyPromotion;
    action.env = q(p->env);
    action.promotion = p->id;
    const QString what = approve ? tr("Approve promoting %1 (generation %2) to %3")
                                 : tr("Deny promoting %1 (generation %2) to %3");
    const QString details =
        approve ? tr("Request #%1, asked by %2. Approvals so far: %3 of %4.")
                      .arg(p->id)
                      .arg(who(p->requestedBy, p->requestedLogin).toHtmlEscaped())
                      .arg(approvalsGiven(*p))
                      .arg(p->approvalsRequired)
                : tr("Request #%1, asked by %2. A denial is final: this release cannot be promoted to %3 "
                     "under this generation.")
                      .arg(p->id)
                      .arg(who(p->requestedBy, p->requestedLogin).toHtmlEscaped(), esc(p->env));
    ActionDialog dialog(action, what.arg(q(p->release)).arg(p->generation).arg(q(p->env)), this, details);
    if (dialog.exec() == QDialog::Accepted) {
        setOperatorName(dialog.action().by);
        emit actionRequested(dialog.action());
        updateButtons();
    }
}

} // namespace relctl::ui
