#include "auditview.h"

#include "auditmodel.h"

#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QMessageBox>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace relctl::ui {

namespace {

std::optional<std::string> value(const QString& text)
{
    const QString t = text.trimmed();
    if (t.isEmpty() || t.startsWith(QLatin1Char('(')))
        return std::nullopt;
    return t.toStdString();
}

QComboBox* choices(QWidget* parent, const QStringList& items)
{
    auto* box = new QComboBox(parent);
    box->addItem(QObject::tr("(any)"));
    box->addItems(items);
    return box;
}

} // namespace

AuditView::AuditView(AuditModel* model, QWidget* parent)
    : QWidget(parent), m_model(model), m_env(choices(this, {})), m_job(new QLineEdit(this)),
      m_operation(
          choices(this, {QStringLiteral("acquire"), QStringLiteral("renew"), QStringLiteral("release"),
                         QStringLiteral("publish"), QStringLiteral("revoke"), QStringLiteral("freeze"),
                         QStringLiteral("unfreeze"), QStringLiteral("approve"), QStringLiteral("deny")})),
      m_reason(choices(this, {QStringLiteral("STALE_GENERATION"), QStringLiteral("SUPERSEDED"),
                              QStringLiteral("LEASE_EXPIRED"), QStringLiteral("LEASE_SUPERSEDED"),
                              QStringLiteral("LEASE_RELEASED"), QStringLiteral("LEASE_REVOKED"),
                              QStringLiteral("BAD_LEASE_ID"), QStringLiteral("UNKNOWN_LEASE"),
                              QStringLiteral("DISPATCH_FROZEN"), QStringLiteral("NO_LEASE")})),
      m_text(new QLineEdit(this)), m_since(new QComboBox(this)), m_table(new QTableView(this))
{
    // The time range, as incident reviews ask for it: the last so much.
    m_since->addItem(tr("any time"), QVariant());
    m_since->addItem(tr("last 15 minutes"), 15 * 60);
    m_since->addItem(tr("last hour"), 60 * 60);
    m_since->addItem(tr("last 24 hours"), 24 * 60 * 60);
    m_since->addItem(tr("last 7 days"), 7 * 24 * 60 * 60);
    m_since->setToolTip(tr("Time range"));
    m_job->setPlaceholderText(tr("job"));
    m_text->setPlaceholderText(tr("search job, release, op id, host…"));
    m_env->setToolTip(tr("Environment"));
    m_operation->setToolTip(tr("Operation"));
    m_reason->setToolTip(tr("Refusal reason"));
    auto* csv = new QToolButton(this);
    csv->setText(tr("Export &CSV…"));
    auto* json = new QToolButton(this);
    json->setText(tr("Export &JSON…"));
    for (QToolButton* b : {csv, json})
        b->setToolTip(tr("Exports the rows loaded under the current filter"));

    auto* filters = new QHBoxLayout;
    filters->addWidget(m_env);
    filters->addWidget(m_job);
    filters->addWidget(m_operation);
    filters->addWidget(m_reason);
    filters->addWidget(m_since);
    filters->addWidget(m_text, 1);
    filters->addWidget(csv);
    filters->addWidget(json);

    m_table->setModel(model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSortingEnabled(false); // the server orders (newest first); sorting loaded rows would mislead
    m_table->setWordWrap(false);
    // Sized once from the first page: ResizeToContents would measure every loaded row on each change.
    connect(model, &QAbstractItemModel::rowsInserted, this, [this] {
        if (!m_sized) {
            m_table->resizeColumnsToContents();
            m_sized = true;
        }
    });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(filters);
    layout->addWidget(m_table);

    for (QComboBox* box : {m_env, m_operation, m_reason, m_since})
        connect(box, &QComboBox::currentIndexChanged, this, &AuditView::applyFilter);
    for (QLineEdit* edit : {m_job, m_text})
        connect(edit, &QLineEdit::editingFinished, this, &AuditView::applyFilter);
    connect(csv, &QToolButton::clicked, this, [this] { exportRows(false); });
    connect(json, &QToolButton::clicked, this, [this] { exportRows(true); });
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!current.isValid())
                    return;
                emit eventSelected(current.data(AuditModel::EventId).toLongLong(),
                                   current.data(AuditModel::AtMs).toLongLong(),
                                   current.data(AuditModel::Rejected).toBool());
            });
}

void AuditView::setEnvironments(const QStringList& names)
{
    const QString current = m_env->currentText();
    QSignalBlocker block(m_env);
    while (m_env->count() > 1)
        m_env->removeItem(1);
    m_env->addItems(names);
    m_env->setCurrentText(current);
}

void AuditView::applyFilter()
{
    relctl::AuditFilter filter;
    filter.env = value(m_env->currentText());
    filter.job = value(m_job->text());
    filter.operation = value(m_operation->currentText());
    filter.reason = value(m_reason->currentText());
    filter.text = value(m_text->text());
    if (const QVariant seconds = m_since->currentData(); seconds.isValid())
        filter.from = QDateTime::currentMSecsSinceEpoch() - seconds.toLongLong() * 1000;
    m_model->setFilter(filter);
}

void AuditView::selectEvent(qint64 eventId)
{
    if (auto row = m_model->rowForEvent(eventId)) {
        const QModelIndex index = m_model->index(*row, 0);
        QSignalBlocker block(m_table->selectionModel());
        m_table->selectionModel()->setCurrentIndex(index, QItemSelectionModel::ClearAndSelect |
                                                              QItemSelectionModel::Rows);
        m_table->scrollTo(index);
    }
}

void AuditView::exportRows(bool json)
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Export audit events"), QString(),
                                                      json ? tr("JSON (*.json)") : tr("CSV (*.csv)"));
    if (path.isEmpty())
        return;
    QFile file(path);
    const bool ok = file.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
                    (json ? m_model->exportJson(file) : m_model->exportCsv(file));
    if (!ok)
        QMessageBox::warning(this, tr("Export failed"),
                             tr("Could not write %1: %2").arg(path, file.errorString()));
}

} // namespace relctl::ui
