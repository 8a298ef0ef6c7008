// The Promotions view: the promotion paths, the open and decided requests,
// and for the selected one its readiness, its decisions and its manifest
// changes; approve and deny, offered where the login may decide.
#include "promotionsview.h"

#include "actiondialog.h"
#include "environmentsmodel.h"
#include "icons.h"
#include "manifestdiff.h"
#include "manifesthistorymodel.h"
#include "promotionstanding.h"
#include "timeformat.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QSet>
#include <QSplitter>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace relctl::ui {

namespace {

// "1 approval", "2 approvals": without a translation loaded, Qt's %n
// leaves "approval(s)" as written.
QString approvalCount(std::int64_t n)
{
    return n == 1 ? QObject::tr("1 approval") : QObject::tr("%1 approvals").arg(n);
}

QString moreApprovals(std::int64_t n)
{
    return n == 1 ? QObject::tr("1 more approval") : QObject::tr("%1 more approvals").arg(n);
}

// How many decided requests "Open and recently decided" shows: enough to see
// what was decided today without the list growing with the history.
constexpr int kRecentDecisions = 10;

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

bool isOpen(const relctl::Promotion& p)
{
    return p.state == "open";
}

bool isDenied(const relctl::Promotion& p)
{
    return p.state == "denied";
}

// The role whose members decide: the request's, else its environment's.
// One decision as the details list it: "bob (login rm_bob) at … — reason".
QString voteHtml(const relctl::PromotionVote& v)
{
    return QObject::tr("%1 at %2 — %3")
        .arg(who(v.by, v.login).toHtmlEscaped(), formatTime(v.at),
             v.reason && !v.reason->empty() ? esc(*v.reason) : QObject::tr("<i>no reason given</i>"));
}

// When the soak on the upstream ends: accepted there plus the soak.
std::optional<qint64> soakEndMs(const relctl::PromotionUpstream& up)
{
    if (!up.acceptedAt)
        return std::nullopt;
    return up.acceptedAt->millis() + up.soakMs;
}

bool isCurrentOn(const relctl::Promotion& p)
{
    return p.current.is_object() && p.current.value("release", std::string()) == p.release &&
           p.current.value("generation", std::int64_t{-1}) == p.generation;
}

} // namespace

// The paths' layout: which environments each path runs through and its
// shape. It depends only on the environments' names and upstreams, so a
// live update that changes a release, a soak or a freeze reuses it.
struct PromotionsView::PathsLayout
{
    struct Path
    {
        std::vector<std::string> chain; // its environments, the start first
        QString shape;                  // its stages without their group: "test → staging → prod"
    };
    std::vector<Path> paths;
    // The paths each environment is on (an upstream is on every path below
    // it), by the names the paths hold.
    std::unordered_map<std::string_view, std::vector<int>> pathsOf;
    std::map<QString, int> shapes; // how many paths have each shape

    PathsLayout() = default;
    PathsLayout(const PathsLayout&) = delete; // pathsOf points into paths
    PathsLayout& operator=(const PathsLayout&) = delete;

    // One path per environment nothing is promoted from (the end of a
    // path), back to its start; a cycle (which the protocol should not
    // allow) stops at the first repeat. Names are read in place, not
    // copied: at 10,000 environments copies cost the first load 20 ms.
    static std::shared_ptr<const PathsLayout> of(const std::vector<const relctl::Environment*>& environments)
    {
        std::unordered_map<std::string_view, const relctl::Environment*> byName;
        std::unordered_set<std::string_view> upstreams;
        byName.reserve(environments.size());
        for (const relctl::Environment* e : environments) {
            byName[e->name] = e;
            if (e->promoteFrom)
                upstreams.insert(*e->promoteFrom);
        }
        auto layout = std::make_shared<PathsLayout>();
        for (const relctl::Environment* e : environments) {
            if (!e->promoteFrom || upstreams.contains(e->name))
                continue;
            Path path;
            std::string shape;
            for (const relctl::Environment* at = e;
                 at && std::find(path.chain.begin(), path.chain.end(), at->name) == path.chain.end();) {
                path.chain.push_back(at->name);
                const std::size_t dot = at->name.find('.');
                const std::string_view stage = dot == std::string::npos
                                                   ? std::string_view(at->name)
                                                   : std::string_view(at->name).substr(dot + 1);
                shape.insert(0, shape.empty() ? std::string(stage) : std::string(stage) + " → ");
                const auto up = at->promoteFrom ? byName.find(*at->promoteFrom) : byName.end();
                at = up == byName.end() ? nullptr : up->second;
            }
            std::reverse(path.chain.begin(), path.chain.end());
            path.shape = q(shape);
            ++layout->shapes[path.shape];
            layout->paths.push_back(std::move(path));
        }
        // Once every path is in place: the keys point into their names.
        for (std::size_t i = 0; i < layout->paths.size(); ++i)
            for (const std::string& name : layout->paths[i].chain)
                layout->pathsOf[name].push_back(int(i));
        return layout;
    }

    // The paths as the view shows them, each listed step read from `find`
    // now: every path when there are few, else those of the environments in
    // `busy` and a count of the others by shape.
    QString html(const QSet<QString>& busy,
                 const std::function<const relctl::Environment*(const std::string&)>& find) const
    {
        const auto step = [](const relctl::Environment& e) {
            QString out = QStringLiteral("<b>%1</b> ").arg(esc(e.name));
            // The release only: the generation is in the request's details,
            // and a path must fit a side dock in a line or two.
            out += e.current ? esc(e.current->release) : tr("nothing yet");
            QStringList rules;
            if (e.soakMs > 0)
                rules << tr("soak %1").arg(duration(e.soakMs));
            if (e.approvalsRequired > 0)
                rules << approvalCount(e.approvalsRequired);
            if (e.frozen)
                rules << tr("frozen");
            if (!rules.isEmpty())
                out += QStringLiteral(" <small>[%1]</small>").arg(rules.join(QStringLiteral(", ")));
            return out;
        };
        const auto line = [&](const Path& path) {
            QStringList chain;
            for (const std::string& name : path.chain)
                if (const relctl::Environment* e = find(name))
                    chain << step(*e);
            return chain.join(QStringLiteral(" &nbsp;→&nbsp; "));
        };
        if (paths.empty())
            return tr("<i>No environment is promoted from another (relctl env set ENV --promote-from "
                      "UPSTREAM).</i>");
        QStringList lines;
        if (paths.size() <= kPathsListed) {
            for (const Path& p : paths)
                lines << line(p);
            return tr("<b>Paths</b><br>") + lines.join(QStringLiteral("<br>"));
        }
        // An organisation has hundreds of paths of a few shapes: the ones
        // with a request open are listed (found from the requests, not by
        // reading every path), the rest counted by shape.
        std::vector<int> open;
        for (const QString& env : busy) {
            const auto it = pathsOf.find(env.toStdString());
            if (it != pathsOf.end())
                open.insert(open.end(), it->second.begin(), it->second.end());
        }
        std::sort(open.begin(), open.end());
        open.erase(std::unique(open.begin(), open.end()), open.end());
        if (open.size() > kPathsListed)
            open.resize(kPathsListed);
        std::map<QString, int> others = shapes;
        for (int i : open) {
            lines << line(paths[std::size_t(i)]);
            --others[paths[std::size_t(i)].shape];
        }
        for (const auto& [shape, count] : others) {
            if (count == 1)
                lines << tr("<i>%1: 1 more path</i>").arg(shape.toHtmlEscaped());
            else if (count > 1)
                lines << tr("<i>%1: %2 more paths</i>").arg(shape.toHtmlEscaped()).arg(count);
        }
        return tr("<b>Paths</b> (%1; those with an open request first)<br>").arg(paths.size()) +
               lines.join(QStringLiteral("<br>"));
    }
};

PromotionsView::PromotionsView(QWidget* parent)
    : QWidget(parent), m_paths(new QLabel(this)), m_filter(new QComboBox(this)),
      m_list(new QListWidget(this)), m_details(new QTextBrowser(this)),
      m_split(new QSplitter(Qt::Vertical, this)), m_approve(new QPushButton(tr("&Approve…"), this)),
      m_deny(new QPushButton(tr("&Deny…"), this))
{
    m_paths->setObjectName(QStringLiteral("promotionPaths"));
    m_paths->setTextFormat(Qt::RichText);
    m_paths->setWordWrap(true);
    m_filter->setObjectName(QStringLiteral("promotionFilter"));
    m_filter->addItem(tr("Open and recently decided"), int(Filter::OpenAndRecent));
    m_filter->addItem(tr("Open"), int(Filter::Open));
    m_filter->addItem(tr("Decided"), int(Filter::Decided));
    m_filter->addItem(tr("All"), int(Filter::All));
    m_filter->setToolTip(tr("Which promotion requests the list shows (relctl promote list --all shows every "
                            "one)."));
    m_list->setObjectName(QStringLiteral("promotionRequests"));
    // One line a request, the whole of it in the tooltip: the details below
    // get the room.
    m_list->setWordWrap(false);
    m_list->setTextElideMode(Qt::ElideRight);
    m_list->setUniformItemSizes(true);
    m_details->setObjectName(QStringLiteral("promotionDetails"));
    m_approve->setIcon(consoleIcon(QStringLiteral("approve")));
    m_deny->setIcon(consoleIcon(QStringLiteral("deny")));
    setFocusProxy(m_list);

    // The list and the details share the height, the details getting most
    // of it; the operator can drag the handle either way.
    m_split->setObjectName(QStringLiteral("promotionSplitter"));
    // The paths head the list: the requests are read against them.
    auto* requests = new QWidget(this);
    auto* requestsLayout = new QVBoxLayout(requests);
    requestsLayout->setContentsMargins(0, 0, 0, 0);
    requestsLayout->addWidget(m_paths);
    requestsLayout->addWidget(m_list, 1);
    m_split->addWidget(requests);
    m_split->addWidget(m_details);
    m_split->setChildrenCollapsible(false);
    // The dock beside the audit browser must not ask for more height than
    // the list and the details did without a splitter: the splitter's own
    // size hint is ignored, and the dock gives it what the window can spare.
    m_split->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Ignored);
    m_split->setStretchFactor(0, 1);
    m_split->setStretchFactor(1, 3);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_approve);
    buttons->addWidget(m_deny);
    buttons->addStretch();
    auto* show = new QLabel(tr("&Show:"), this);
    show->setBuddy(m_filter);
    buttons->addWidget(show);
    buttons->addWidget(m_filter);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_split, 1);
    layout->addLayout(buttons);
    connect(m_approve, &QPushButton::clicked, this, [this] { decide(true); });
    connect(m_deny, &QPushButton::clicked, this, [this] { decide(false); });
    connect(m_list, &QListWidget::currentRowChanged, this, [this] {
        updateButtons();
        showDetails();
    });
    connect(m_filter, &QComboBox::currentIndexChanged, this, [this] {
        fillList();
        updateButtons();
        showDetails();
    });
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &PromotionsView::showDetails);
    m_readAt.start();
    setPromotions({});
}

void PromotionsView::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    // In a tall dock the details go below the list; in a wide, short one
    // (the side of a 1280x800 window, between the environments and the
    // audit browser) to its right, where they keep their lines.
    const Qt::Orientation wanted = width() > 2 * height() ? Qt::Horizontal : Qt::Vertical;
    if (wanted != m_split->orientation()) {
        m_split->setOrientation(wanted);
        m_splitSized = false;
        if (isVisible())
            sizeSplit();
    }
}

void PromotionsView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (!m_splitSized)
        sizeSplit();
}

void PromotionsView::sizeSplit()
{
    // A third of the length to the list, the rest to the details (two
    // fifths side by side): left to the size hints, the two would share it
    // about equally, and the details of a request need the room. After that
    // the operator's handle position stays, until the orientation changes.
    m_splitSized = true;
    const bool vertical = m_split->orientation() == Qt::Vertical;
    const int length = std::max(vertical ? m_split->height() : m_split->width(), 200);
    const int list = vertical ? length / 3 : length * 2 / 5;
    m_split->setSizes({list, length - list});
}

void PromotionsView::setPromotions(const SharedPromotions& snapshot)
{
    // The whole before is kept until the list is made: its pieces the list
    // compares by address stay allocated, so no new piece can take the
    // address of one it showed.
    const SharedPromotions before = std::exchange(m_snapshot, snapshot);
    m_readAt.restart();
    showPaths();
    fillList();
    updateButtons();
    showDetails();
}

void PromotionsView::showPaths()
{
    QSet<QString> busy;
    for (const SharedPromotions::PromotionPtr& p : m_snapshot.promotions())
        if (p->state == "open")
            busy.insert(q(p->env));
    // The layout holds while every environment has the name and upstream it
    // had: comparing the shared pieces is a pointer each, and only a piece
    // a live update replaced is looked into.
    const auto& now = m_snapshot.environments();
    const auto& was = m_layoutFrom.environments();
    bool same = m_layout && now.size() == was.size();
    for (std::size_t i = 0; same && i < now.size(); ++i)
        same =
            now[i] == was[i] || (now[i]->name == was[i]->name && now[i]->promoteFrom == was[i]->promoteFrom);
    if (!same) {
        std::vector<const relctl::Environment*> envs;
        envs.reserve(now.size());
        for (const SharedPromotions::EnvironmentPtr& e : now)
            envs.push_back(e.get());
        m_layout = PathsLayout::of(envs);
        ++m_pathLayouts;
    }
    m_layoutFrom = m_snapshot;
    const SharedPromotions& snapshot = m_snapshot;
    m_paths->setText(
        m_layout->html(busy, [&snapshot](const std::string& name) { return snapshot.environment(name); }));
}

void PromotionsView::fillList()
{
    // Live reloads keep the request the operator is reading selected.
    const relctl::Promotion* was = selected();
    const std::int64_t keep = was ? was->id : 0;
    const auto filter = Filter(m_filter->currentData().toInt());
    const bool showOpen = filter != Filter::Decided;
    const bool showDecided = filter != Filter::Open;

    std::vector<int> open;
    std::vector<int> decided;
    const auto& promotions = m_snapshot.promotions();
    for (std::size_t i = 0; i < promotions.size(); ++i)
        (isOpen(*promotions[i]) ? open : decided).push_back(static_cast<int>(i));
    // The newest decision first: what was just decided is what one looks for.
    // Ids break ties, so the order is total and a partial sort of the ten
    // shown gives the same rows as a whole sort.
    const auto newer = [&promotions](int a, int b) {
        const relctl::Promotion& x = *promotions[std::size_t(a)];
        const relctl::Promotion& y = *promotions[std::size_t(b)];
        const qint64 xt = x.decidedAt ? x.decidedAt->millis() : 0,
                     yt = y.decidedAt ? y.decidedAt->millis() : 0;
        return xt != yt ? xt > yt : x.id > y.id;
    };
    const std::size_t allDecided = decided.size();
    if (filter == Filter::OpenAndRecent && decided.size() > std::size_t(kRecentDecisions)) {
        std::partial_sort(decided.begin(), decided.begin() + kRecentDecisions, decided.end(), newer);
        decided.resize(kRecentDecisions);
    } else {
        std::sort(decided.begin(), decided.end(), newer);
    }

    // The rows wanted, then the list made so: a row showing the same pieces
    // (request and environment) as before keeps its item untouched. A live
    // update replaces the pieces of the environments it read, so it words
    // and lays out only their rows, not every open request of an
    // organisation (148 rows at 10,000 environments, a millisecond each
    // update).
    std::vector<ListRow> rows;
    const auto placeholder = [&rows](const QString& text, bool heading) {
        rows.push_back({nullptr, nullptr, text, heading});
    };
    const auto add = [&](int index) {
        const relctl::Promotion& p = *promotions[std::size_t(index)];
        rows.push_back({&p, environmentOf(p), QString(), false});
    };
    if (showOpen) {
        for (int i : open)
            add(i);
        if (open.empty())
            placeholder(tr("No promotion request awaits a decision."), false);
    }
    if (showDecided) {
        if (filter == Filter::OpenAndRecent && allDecided > decided.size())
            placeholder(tr("Decided: the %1 most recent of %2 (Show: Decided for all)")
                            .arg(decided.size())
                            .arg(allDecided),
                        true);
        else if (showOpen && !decided.empty())
            placeholder(tr("Decided, newest first"), true);
        for (int i : decided)
            add(i);
        if (!showOpen && decided.empty())
            placeholder(tr("No promotion request has been decided yet."), false);
    }

    const QSignalBlocker quiet(m_list);
    int current = -1;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const ListRow& row = rows[r];
        if (row.promotion && row.promotion->id == keep)
            current = int(r);
        QListWidgetItem* item = m_list->item(int(r));
        if (item && r < m_shown.size() && m_shown[r].sameAs(row))
            continue;
        if (!item)
            item = new QListWidgetItem(m_list);
        showRow(item, row);
    }
    while (m_list->count() > int(rows.size()))
        delete m_list->takeItem(m_list->count() - 1);
    m_shown = std::move(rows);
    m_list->setCurrentRow(current);
}

void PromotionsView::showRow(QListWidgetItem* item, const ListRow& row) const
{
    if (!row.promotion) {
        item->setText(row.text);
        item->setIcon(QIcon());
        item->setToolTip(QString());
        // Not selectable, but the list stays enabled so the keyboard can
        // still reach the view.
        item->setFlags(Qt::NoItemFlags);
        QFont font = m_list->font();
        font.setBold(row.heading);
        item->setFont(font);
        return;
    }
    const relctl::Promotion& p = *row.promotion;
    QString text = tr("#%1 %2 ← %3 (generation %4)").arg(p.id).arg(q(p.env), q(p.release)).arg(p.generation);
    QStringList names;
    for (const relctl::PromotionVote& v : p.approvals)
        names << q(v.by);
    if (isOpen(p)) {
        text += tr(" · asked by %1 · %2 of %3 approvals")
                    .arg(who(p.requestedBy, p.requestedLogin))
                    .arg(approvalsGiven(p))
                    .arg(p.approvalsRequired);
    } else if (isDenied(p)) {
        text += tr(" · denied %1 by %2")
                    .arg(p.decidedAt ? formatTime(*p.decidedAt) : QString(),
                         p.denial ? who(p.denial->by, p.denial->login) : tr("someone"));
    } else {
        text += tr(" · approved %1 by %2 (%3 of %4)")
                    .arg(p.decidedAt ? formatTime(*p.decidedAt) : QString(), names.join(QStringLiteral(", ")))
                    .arg(approvalsGiven(p))
                    .arg(p.approvalsRequired);
    }
    item->setText(text);
    item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
    item->setFont(m_list->font());
    item->setIcon(isOpen(p) ? QIcon()
                            : consoleIcon(isDenied(p) ? QStringLiteral("deny") : QStringLiteral("approve")));
    item->setToolTip(text + QLatin1Char('\n') + readinessText(p, m_readAt.elapsed(), row.environment));
}

void PromotionsView::setFilter(Filter filter)
{
    m_filter->setCurrentIndex(m_filter->findData(int(filter)));
}

bool PromotionsView::selectPromotion(std::int64_t id)
{
    for (std::size_t row = 0; row < m_shown.size(); ++row)
        if (m_shown[row].promotion && m_shown[row].promotion->id == id) {
            m_list->setCurrentRow(int(row));
            return true;
        }
    return false;
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

void PromotionsView::setPermissions(const Permissions& permissions)
{
    m_permissions = permissions;
    updateButtons();
}

QString PromotionsView::login() const
{
    return m_login.isEmpty() ? m_permissions.login() : m_login;
}

int PromotionsView::count() const
{
    const auto& promotions = m_snapshot.promotions();
    return static_cast<int>(
        std::count_if(promotions.begin(), promotions.end(),
                      [](const SharedPromotions::PromotionPtr& p) { return isOpen(*p); }));
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
    if (row < 0 || std::size_t(row) >= m_shown.size())
        return nullptr;
    return m_shown[std::size_t(row)].promotion;
}

const relctl::Environment* PromotionsView::environmentOf(const relctl::Promotion& promotion) const
{
    return m_snapshot.environment(promotion.env);
}

void PromotionsView::updateButtons()
{
    const bool supported = m_schemaVersion >= kPromotionsSchemaVersion;
    const relctl::Promotion* p = selected();
    const QString login = this->login();
    const PromotionStanding standing =
        p ? PromotionStanding::of(*p, environmentOf(*p), login) : PromotionStanding{};
    const std::optional<std::string>& role = standing.approverRole;
    const bool mayDecide = m_permissions.canDecidePromotion(role);
    // Whose request it is is a matter of logins (the protocol refuses the
    // requester's login, SELF_APPROVAL), and of the name typed as well.
    const QString me = operatorName();
    const bool ownLogin = standing.requestedByLogin;
    const bool own = p && (ownLogin || q(p->requestedBy) == me);
    // An approval counts once per login: this login's own is already in.
    const relctl::PromotionVote* mine = standing.approval;
    const QString why = !supported ? tr("The database's relctl schema (version %1) predates promotions: "
                                        "run relctl migrate.")
                                         .arg(m_schemaVersion)
                        : !p         ? tr("Select a request first.")
                        : !mayDecide ? m_permissions.whyNotDecidePromotion(role)
                        : isDenied(*p)
                            ? tr("Request #%1 was denied%2: a denial is final.")
                                  .arg(p->id)
                                  .arg(p->decidedAt ? tr(" at %1").arg(formatTime(*p->decidedAt)) : QString())
                            : QString();
    const bool approved = p && !isOpen(*p) && !isDenied(*p);
    m_deny->setEnabled(supported && p && mayDecide && isOpen(*p));
    m_deny->setToolTip(!why.isEmpty() ? why
                       : approved ? tr("Request #%1 is approved already: a denial cannot undo it. Freeze %2 "
                                       "to stop the promotion.")
                                        .arg(p->id)
                                        .arg(q(p->env))
                                  : QString());
    m_approve->setEnabled(supported && p && mayDecide && isOpen(*p) && !own && !mine);
    m_approve->setToolTip(
        !why.isEmpty() ? why
        : approved     ? tr("Request #%1 is approved already (%2 of %3).")
                         .arg(p->id)
                         .arg(approvalsGiven(*p))
                         .arg(p->approvalsRequired)
        : ownLogin ? tr("Your login (%1) requested this promotion: someone else, with a login "
                        "of their own, must approve it.")
                         .arg(login)
        : own  ? tr("You (%1) requested this promotion: someone else must approve it.").arg(me)
        : mine ? tr("Your login (%1) already approved this request as %2: one login counts "
                    "once.")
                     .arg(login, q(mine->by))
               : QString());
}

void PromotionsView::showDetails()
{
    const relctl::Promotion* p = selected();
    if (!p) {
        m_tick.stop();
        m_details->setHtml(QStringLiteral("<p><i>%1</i></p>")
                               .arg(tr("Select a promotion request to see whether it is ready, where it "
                                       "stands upstream, its decisions and what its manifest changes.")));
        return;
    }
    const int scroll = m_details->verticalScrollBar() ? m_details->verticalScrollBar()->value() : 0;
    m_details->setHtml(detailsHtml(*p, m_readAt.elapsed(), environmentOf(*p)));
    if (m_details->verticalScrollBar())
        m_details->verticalScrollBar()->setValue(scroll);
    // Tick only while a soak is running: otherwise nothing moves.
    const bool soaking = p->upstream && p->upstream->soakRemainingMs.value_or(0) > m_readAt.elapsed();
    if (soaking && !m_tick.isActive())
        m_tick.start();
    else if (!soaking)
        m_tick.stop();
}

QString PromotionsView::pathsHtml(const std::vector<relctl::Environment>& environments,
                                  const QSet<QString>& busy)
{
    std::vector<const relctl::Environment*> envs;
    std::unordered_map<std::string, const relctl::Environment*> byName;
    for (const relctl::Environment& e : environments) {
        envs.push_back(&e);
        byName[e.name] = &e;
    }
    return PathsLayout::of(envs)->html(busy,
                                       [&byName](const std::string& name) -> const relctl::Environment* {
                                           const auto it = byName.find(name);
                                           return it == byName.end() ? nullptr : it->second;
                                       });
}

QString PromotionsView::readinessText(const relctl::Promotion& p, qint64 elapsedMs,
                                      const relctl::Environment* env)
{
    const QString head = tr("%1 to %2").arg(q(p.release), q(p.env));
    if (isDenied(p))
        return tr("%1: denied%2 by %3: final.")
            .arg(head, p.decidedAt ? tr(" at %1").arg(formatTime(*p.decidedAt)) : QString(),
                 p.denial ? who(p.denial->by, p.denial->login) : tr("someone"));
    QStringList parts;
    QStringList missing;
    const std::int64_t given = approvalsGiven(p);
    if (isOpen(p)) {
        parts << tr("%1 of %2 approved").arg(given).arg(p.approvalsRequired);
        if (given < p.approvalsRequired) {
            const std::optional<std::string> role = PromotionStanding::of(p, env, {}).approverRole;
            missing << moreApprovals(p.approvalsRequired - given) +
                           (role ? tr(" from members of %1").arg(q(*role)) : QString());
        }
    } else {
        parts << tr("approved%1 (%2 of %3)")
                     .arg(p.decidedAt ? tr(" at %1").arg(formatTime(*p.decidedAt)) : QString())
                     .arg(given)
                     .arg(p.approvalsRequired);
    }
    if (const auto& up = p.upstream) {
        if (const std::optional<qint64> end = soakEndMs(*up)) {
            const std::int64_t left = std::max<std::int64_t>(0, up->soakRemainingMs.value_or(0) - elapsedMs);
            if (left > 0) {
                parts << tr("soak ends %1 (%2 to go)").arg(formatTime(*end), formatDuration(left));
                missing << tr("the soak on %1").arg(q(up->env));
            } else if (up->soakMs > 0) {
                parts << tr("soak done (ended %1)").arg(formatTime(*end));
            } else {
                parts << tr("accepted on %1 (no soak)").arg(q(up->env));
            }
        } else {
            parts << tr("not accepted on %1").arg(q(up->env));
            missing << tr("%1 accepting it").arg(q(up->env));
        }
    }
    if (env && env->frozen) {
        parts << tr("blocked by the freeze on %1 (frozen by %2 since %3)")
                     .arg(q(env->name), q(env->frozen->by), formatTime(env->frozen->at));
        missing << tr("an unfreeze of %1").arg(q(env->name));
    }
    QString line = head + QStringLiteral(": ") + parts.join(QStringLiteral(", "));
    if (!missing.isEmpty())
        line += tr("; missing: %1.").arg(missing.join(QStringLiteral(", ")));
    else if (isCurrentOn(p))
        line += tr("; it is current on %1.").arg(q(p.env));
    else
        line += tr("; nothing missing: the next deploy of %1 to %2 passes the promotion gate.")
                    .arg(q(p.release), q(p.env));
    return line;
}

QString PromotionsView::detailsHtml(const relctl::Promotion& p, qint64 elapsedMs,
                                    const relctl::Environment* env)
{
    QString out =
        tr("<h3>Promote %1 (generation %2) to %3</h3>").arg(esc(p.release)).arg(p.generation).arg(esc(p.env));
    out += tr("<p><b>Readiness</b>: %1</p>").arg(readinessText(p, elapsedMs, env).toHtmlEscaped());
    out += tr("<p>Request #%1 (%2%3), asked by <b>%4</b> at %5%6</p>")
               .arg(p.id)
               .arg(esc(p.state), p.decidedAt ? tr(" at %1").arg(formatTime(*p.decidedAt)) : QString(),
                    who(p.requestedBy, p.requestedLogin).toHtmlEscaped(), formatTime(p.requestedAt),
                    p.reason ? QStringLiteral(": ") + esc(*p.reason) : QString());

    const std::int64_t given = approvalsGiven(p);
    out += tr("<p><b>Approvals</b>: %1 of %2%3%4</p>")
               .arg(given)
               .arg(p.approvalsRequired)
               .arg(p.approverRole ? tr(", from members of %1").arg(esc(*p.approverRole)) : QString())
               .arg(!p.approvals.empty() ? QStringLiteral(" — ") + approvers(p).toHtmlEscaped()
                                         : tr(" — none yet"));
    if (!p.approvals.empty()) {
        out += QStringLiteral("<ul>");
        for (const relctl::PromotionVote& v : p.approvals)
            out += QStringLiteral("<li>%1</li>").arg(voteHtml(v));
        out += QStringLiteral("</ul>");
    }
    if (p.denial)
        out += tr("<p><b>Denied</b> by %1</p>").arg(voteHtml(*p.denial));

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
    if (env && env->frozen)
        out += tr("<p><b>Frozen</b>: %1 is frozen by %2 since %3 (%4): a job is refused there until it is "
                  "unfrozen.</p>")
                   .arg(esc(env->name), esc(env->frozen->by), formatTime(env->frozen->at),
                        esc(env->frozen->reason));

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

QString PromotionsView::decisionHtml(const relctl::Promotion& p, bool approve, const QString& login,
                                     const QString& name, qint64 elapsedMs, const relctl::Environment* env)
{
    QStringList lines;
    lines << tr("Request #%1, asked by %2 at %3.")
                 .arg(p.id)
                 .arg(who(p.requestedBy, p.requestedLogin).toHtmlEscaped(), formatTime(p.requestedAt));
    // The server records the connection's login whatever name is typed.
    lines << (login.isEmpty()
                  ? tr("Recorded under this console's database login, name <b>%1</b> (the name below).")
                        .arg(name.toHtmlEscaped())
                  : tr("Recorded as login <b>%1</b>, name <b>%2</b> (the name below).")
                        .arg(login.toHtmlEscaped(), name.toHtmlEscaped()));
    const std::int64_t given = approvalsGiven(p);
    if (!approve) {
        lines
            << tr("A denial is final: %1 (generation %2) can never be promoted to %3 under this generation; "
                  "the approvals so far (%4 of %5) no longer count.")
                   .arg(esc(p.release))
                   .arg(p.generation)
                   .arg(esc(p.env))
                   .arg(given)
                   .arg(p.approvalsRequired);
        return lines.join(QStringLiteral("<br>"));
    }
    const std::int64_t after = given + 1;
    if (after >= p.approvalsRequired)
        lines << tr("This approval makes it <b>%1 of %2</b>: the request is approved, and the next deploy of "
                    "%3 "
                    "to %4 passes the approval gate.")
                     .arg(after)
                     .arg(p.approvalsRequired)
                     .arg(esc(p.release), esc(p.env));
    else
        lines << tr("This approval makes it <b>%1 of %2</b>: %3 needed.")
                     .arg(after)
                     .arg(p.approvalsRequired)
                     .arg(moreApprovals(p.approvalsRequired - after));
    // Approving does not wait for the soak or a freeze (decide_promotion
    // checks neither); the job's deploy is what they hold back.
    if (const auto& up = p.upstream) {
        const std::int64_t left = std::max<std::int64_t>(0, up->soakRemainingMs.value_or(0) - elapsedMs);
        if (const std::optional<qint64> end = soakEndMs(*up); end && left > 0)
            lines
                << tr("Soak: <b>%1 remain</b> (ends %2). Approving before the soak ends is allowed: the "
                      "approval counts, and the promotion waits until the soak has run (a deploy is refused "
                      "NOT_PROMOTED before).")
                       .arg(formatDuration(left), formatTime(*end));
        else if (end)
            lines << tr("Soak: done (ended %1).").arg(formatTime(*end));
        else
            lines << tr("Upstream: %1 has not accepted %2 (generation %3). Approving is allowed, but a "
                        "deploy is "
                        "refused NOT_PROMOTED until it has.")
                         .arg(esc(up->env), esc(p.release))
                         .arg(p.generation);
    }
    if (env && env->frozen)
        lines << tr("<b>%1 is frozen</b> by %2 since %3 (%4): the promotion waits until unfreeze.")
                     .arg(esc(env->name), esc(env->frozen->by), formatTime(env->frozen->at),
                          esc(env->frozen->reason));
    return lines.join(QStringLiteral("<br>"));
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
    // Built before the dialog runs: a live reload while it is open replaces
    // the request p points at.
    const QString what = (approve ? tr("Approve promoting %1 (generation %2) to %3")
                                  : tr("Deny promoting %1 (generation %2) to %3"))
                             .arg(q(p->release))
                             .arg(p->generation)
                             .arg(q(p->env));
    const QString details =
        decisionHtml(*p, approve, login(), operatorName(), m_readAt.elapsed(), environmentOf(*p));
    ActionDialog dialog(action, what, this, details);
    if (dialog.exec() == QDialog::Accepted) {
        emit actionRequested(dialog.action());
        updateButtons();
    }
}

} // namespace relctl::ui
