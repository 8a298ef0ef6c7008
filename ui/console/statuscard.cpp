#include "statuscard.h"

#include "jobstatus.h"
#include "timeformat.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace relctl::ui {

namespace {

QString kindName(StatusLookup::Kind kind)
{
    return kind == StatusLookup::Kind::Job ? QObject::tr("job") : QObject::tr("op id");
}

QString subject(const StatusLookup& lookup, const relctl::JobStatus& status)
{
    // Both when the server knows both: an op id's job, a job's newest op id.
    QStringList parts;
    if (status.job)
        parts << QObject::tr("Job %1").arg(QString::fromStdString(*status.job));
    if (status.opId)
        parts << QObject::tr("op id %1").arg(QString::fromStdString(*status.opId));
    if (parts.isEmpty())
        parts << QObject::tr("%1 %2").arg(kindName(lookup.kind), lookup.key);
    return parts.join(QStringLiteral(" · "));
}

} // namespace

StatusCard::StatusCard(QWidget* parent)
    : QWidget(parent), m_badge(new QLabel(this)), m_subject(new QLabel(this)), m_summary(new QLabel(this)),
      m_next(new QLabel(this)), m_caveat(new QLabel(this)), m_evidence(new QTreeWidget(this)),
      m_notice(new QLabel(this)), m_otherKind(new QPushButton(this))
{
    m_badge->setObjectName(QStringLiteral("statusState"));
    m_subject->setObjectName(QStringLiteral("statusSubject"));
    m_summary->setObjectName(QStringLiteral("statusSummary"));
    m_next->setObjectName(QStringLiteral("statusNext"));
    m_caveat->setObjectName(QStringLiteral("statusCaveat"));
    m_evidence->setObjectName(QStringLiteral("statusEvidence"));
    m_notice->setObjectName(QStringLiteral("statusNotice"));
    m_otherKind->setObjectName(QStringLiteral("statusOtherKind"));

    QFont big = m_badge->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.3);
    m_badge->setFont(big);
    m_badge->setAutoFillBackground(true);
    m_badge->setContentsMargins(10, 4, 10, 4);
    m_badge->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Fixed);
    m_subject->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The server's sentences are plain text (a job name may hold "<").
    for (QLabel* l : {m_summary, m_next, m_caveat, m_notice, m_subject}) {
        l->setTextFormat(Qt::PlainText);
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    QFont bold = m_next->font();
    bold.setBold(true);
    m_next->setFont(bold);
    // The caveat of a stopped command is the one thing a reviewer must not
    // miss before running again: framed in the amber of a state to look at.
    m_caveat->setStyleSheet(QStringLiteral("QLabel { border: 2px solid #c07a00; background: #fff4dc; "
                                           "color: #5a3900; padding: 6px; font-weight: bold; }"));
    m_evidence->setColumnCount(2);
    m_evidence->setHeaderLabels({tr("Evidence"), tr("Value")});
    m_evidence->setRootIsDecorated(false);
    m_evidence->setAlternatingRowColors(true);
    m_evidence->setIndentation(14);
    m_evidence->setSelectionMode(QAbstractItemView::NoSelection);
    m_evidence->setWordWrap(true);
    m_evidence->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_evidence->header()->setStretchLastSection(true);
    m_notice->setForegroundRole(QPalette::PlaceholderText);

    auto* head = new QHBoxLayout;
    head->addWidget(m_badge);
    head->addWidget(m_subject, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(head);
    layout->addWidget(m_summary);
    layout->addWidget(m_next);
    layout->addWidget(m_caveat);
    layout->addWidget(m_evidence, 1);
    layout->addWidget(m_notice);
    layout->addWidget(m_otherKind, 0, Qt::AlignLeft);
    // Without evidence (unknown) the lines stay together at the top rather
    // than spread over the card's height.
    layout->addStretch(0);
    connect(m_otherKind, &QPushButton::clicked, this, [this] {
        StatusLookup other = m_lookup;
        other.kind =
            other.kind == StatusLookup::Kind::Job ? StatusLookup::Kind::Operation : StatusLookup::Kind::Job;
        emit lookupRequested(other);
    });
    clear();
}

void StatusCard::setBadge(const QString& state)
{
    m_badge->setText(state);
    m_badge->setVisible(!state.isEmpty());
    QPalette p = m_badge->palette();
    p.setColor(QPalette::Window, jobstatus::stateColour(state));
    p.setColor(QPalette::WindowText, Qt::white);
    m_badge->setPalette(p);
}

void StatusCard::clear()
{
    m_answered = false;
    setBadge({});
    m_subject->clear();
    m_summary->clear();
    m_next->clear();
    m_caveat->hide();
    m_evidence->clear();
    m_evidence->hide();
    m_otherKind->hide();
    m_notice->setText(tr("Type a job's name or an op id above and press Enter."));
}

void StatusCard::showLookingUp(const StatusLookup& lookup)
{
    clear();
    m_lookup = lookup;
    m_subject->setText(tr("%1 %2").arg(kindName(lookup.kind), lookup.key));
    m_notice->setText(tr("Asking the database what became of %1 %2…").arg(kindName(lookup.kind), lookup.key));
}

void StatusCard::showStatus(const StatusLookup& lookup, const relctl::JobStatus& status, qint64 readAtMs)
{
    clear();
    m_lookup = lookup;
    m_answered = true;
    const QString state = QString::fromStdString(status.state);
    setBadge(state);
    m_subject->setText(subject(lookup, status));
    m_summary->setText(jobstatus::sentence(status.summary));
    m_next->setText(tr("Next: %1").arg(jobstatus::sentence(status.next)));
    const QString caveat = jobstatus::caveat(status.evidence);
    m_caveat->setText(QStringLiteral("\u26a0 ") + jobstatus::sentence(caveat.toStdString()));
    m_caveat->setVisible(!caveat.isEmpty());
    const QList<jobstatus::EvidenceRow> rows = jobstatus::evidenceRows(status.evidence);
    // Nested keys (superseded_by, stopped, lease) under their parent.
    QList<QTreeWidgetItem*> parents;
    for (const jobstatus::EvidenceRow& row : rows) {
        parents.resize(row.depth);
        auto* item =
            parents.isEmpty() ? new QTreeWidgetItem(m_evidence) : new QTreeWidgetItem(parents.last());
        item->setText(0, row.key);
        item->setText(1, row.value);
        item->setToolTip(1, row.value);
        parents << item;
    }
    m_evidence->setRootIsDecorated(
        std::any_of(rows.begin(), rows.end(), [](const jobstatus::EvidenceRow& r) { return r.depth > 0; }));
    m_evidence->expandAll();
    m_evidence->setVisible(!rows.isEmpty());
    m_notice->setText(
        tr("Read from the database at %1; it follows new events while open.").arg(formatTime(readAtMs)));
    // Unknown is the answer that says "safe to retry": it must be unknown
    // under the right name. The other kind is one click away.
    if (status.state == "unknown") {
        m_otherKind->setText(lookup.kind == StatusLookup::Kind::Job ? tr("Look up %1 as an op id instead")
                                                                    : tr("Look up %1 as a job instead"));
        m_otherKind->setText(m_otherKind->text().arg(lookup.key));
        m_otherKind->show();
    }
}

void StatusCard::showFailure(const StatusLookup& lookup, const QString& message)
{
    if (m_answered && lookup == m_lookup) {
        m_notice->setText(
            tr("Could not read it again (%1): this is what the database said earlier.").arg(message));
        return;
    }
    clear();
    m_lookup = lookup;
    m_subject->setText(tr("%1 %2").arg(kindName(lookup.kind), lookup.key));
    m_notice->setText(
        tr("Could not ask the database: %1. Nothing is known either way; do not retry blind.").arg(message));
}

QString StatusCard::state() const
{
    return m_badge->text();
}

QString StatusCard::summary() const
{
    return m_summary->text();
}

QString StatusCard::next() const
{
    return m_next->text();
}

QString StatusCard::caveat() const
{
    return m_caveat->isHidden() ? QString() : m_caveat->text();
}

QString StatusCard::notice() const
{
    return m_notice->text();
}

QStringList StatusCard::evidence() const
{
    QStringList lines;
    for (QTreeWidgetItemIterator it(m_evidence); *it; ++it) {
        int depth = 0;
        for (const QTreeWidgetItem* p = (*it)->parent(); p; p = p->parent())
            ++depth;
        const QString key = QString(depth * 2, QLatin1Char(' ')) + (*it)->text(0);
        lines << ((*it)->text(1).isEmpty() ? key : key + QStringLiteral(": ") + (*it)->text(1));
    }
    return lines;
}

QColor StatusCard::badgeColour() const
{
    return m_badge->palette().color(QPalette::Window);
}

} // namespace relctl::ui
