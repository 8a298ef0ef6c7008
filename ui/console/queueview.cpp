#include "queueview.h"

#include "queuemodel.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace relctl::ui {

QueueView::QueueView(QWidget* parent)
    : QWidget(parent), m_model(new QueueModel(this)), m_table(new QTableView(this)),
      m_summary(new QLabel(this)), m_selectedOnly(new QCheckBox(tr("&Selected environment only"), this))
{
    m_table->setObjectName(QStringLiteral("queueTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->setAlternatingRowColors(true);
    m_table->setTabKeyNavigation(false);
    m_table->setWordWrap(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_summary->setObjectName(QStringLiteral("queueSummary"));
    m_summary->setWordWrap(true);
    m_selectedOnly->setObjectName(QStringLiteral("queueSelectedOnly"));
    m_selectedOnly->setToolTip(
        tr("Show only the queue of the environment selected in the environments table"));
    setFocusProxy(m_table);

    auto* top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_selectedOnly);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_table);
    connect(m_selectedOnly, &QCheckBox::toggled, this, &QueueView::applyFilter);
    setEnvironments({});
}

void QueueView::setEnvironments(const std::vector<relctl::EnvironmentRow>& environments)
{
    int waiting = 0;
    QStringList where;
    for (const relctl::EnvironmentRow& e : environments) {
        waiting += int(e.queue.size());
        if (!e.queue.empty())
            where << tr("%1 on %2").arg(e.queue.size()).arg(QString::fromStdString(e.name));
    }
    m_model->setEnvironments(environments);
    m_summaryText =
        waiting == 0
            ? tr("Nothing is waiting.")
            : tr("%n candidate(s) waiting: %1.", nullptr, waiting).arg(where.join(QStringLiteral(", ")));
    m_summary->setText(m_summaryText);
    if (waiting != m_waiting) {
        m_waiting = waiting;
        emit waitingChanged(waiting);
    }
}

void QueueView::setSelectedEnvironment(const QString& env)
{
    m_selected = env;
    applyFilter();
}

void QueueView::applyFilter()
{
    m_model->setEnvironmentFilter(m_selectedOnly->isChecked() ? m_selected : QString());
}

void QueueView::setNow(qint64 serverNowEstimate)
{
    m_model->setNow(serverNowEstimate);
}

void QueueView::setStale(bool stale)
{
    m_model->setStale(stale);
}

} // namespace relctl::ui
