#include "manifesthistorydialog.h"

#include "actiondialog.h"
#include "manifestdiff.h"
#include "manifesthistorymodel.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QTextBrowser>
#include <QTextDocument>
#include <QVBoxLayout>
#include <algorithm>

namespace relctl::ui {

namespace {

QString esc(const std::string& s)
{
    return QString::fromStdString(s).toHtmlEscaped();
}

QString manifestName(const relctl::Manifest& m)
{
    return QObject::tr("%1 (generation %2, manifest #%3)")
        .arg(esc(m.release))
        .arg(m.generation)
        .arg(m.id.value_or(0));
}

} // namespace

ManifestHistoryDialog::ManifestHistoryDialog(const QString& env, QWidget* parent)
    : QDialog(parent), m_env(env), m_model(new ManifestHistoryModel(this)), m_summary(new QLabel(this)),
      m_table(new QTableView(this)), m_preview(new QTextBrowser(this)),
      m_rollback(new QPushButton(tr("&Roll back to this…"), this))
{
    setObjectName(QStringLiteral("manifestHistory"));
    setWindowTitle(tr("Manifest history: %1").arg(env));
    m_summary->setObjectName(QStringLiteral("manifestHistorySummary"));
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_rollback->setIcon(style()->standardIcon(QStyle::SP_ArrowBack));
    m_rollback->setObjectName(QStringLiteral("rollBack"));

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    split->addWidget(m_preview);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_rollback, QDialogButtonBox::ActionRole);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_rollback, &QPushButton::clicked, this, &ManifestHistoryDialog::rollBack);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ManifestHistoryDialog::updateSelection);
    setFocusProxy(m_table);
    resize(900, 560);
    setHistory({});
}

void ManifestHistoryDialog::setHistory(const relctl::ManifestHistory& history)
{
    // The reset loses the selection: keep the manifest the operator picked.
    const relctl::ManifestHistoryEntry* was = selectedEntry();
    const qint64 keep = was && was->manifest.id ? *was->manifest.id : 0; // ids start at 1
    m_model->setHistory(history);
    const relctl::ManifestHistoryEntry* current = m_model->currentEntry();
    m_summary->setText(
        history.history.empty()
            ? tr("<b>%1</b> has accepted no manifest yet.").arg(m_env.toHtmlEscaped())
            : tr("<b>%1</b> runs %2. High-water generation <b>%3</b>: the freshness bar, which a rollback "
                 "does not lower. %4 entries, %5 of them rollbacks.")
                  .arg(m_env.toHtmlEscaped(), current ? manifestName(current->manifest) : tr("no manifest"))
                  .arg(history.highWaterGeneration)
                  .arg(history.history.size())
                  .arg(std::count_if(
                      history.history.begin(), history.history.end(),
                      [](const relctl::ManifestHistoryEntry& e) { return e.rollback.has_value(); })));
    if (keep == 0 || !selectManifest(keep))
        updateSelection();
}

void ManifestHistoryDialog::setSchemaVersion(int version)
{
    m_schemaVersion = version;
    updateSelection();
}

void ManifestHistoryDialog::setPermissions(const Permissions& permissions)
{
    m_permissions = permissions;
    updateSelection();
}

QString ManifestHistoryDialog::summaryText() const
{
    QTextDocument doc;
    doc.setHtml(m_summary->text());
    return doc.toPlainText();
}

bool ManifestHistoryDialog::selectManifest(qint64 manifestId)
{
    for (int row = 0; row < m_model->rowCount(); ++row)
        if (m_model->index(row, 0).data(ManifestHistoryModel::ManifestId).toLongLong() == manifestId) {
            m_table->selectRow(row);
            return true;
        }
    return false;
}

const relctl::ManifestHistoryEntry* ManifestHistoryDialog::selectedEntry() const
{
    const QModelIndexList rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? nullptr : m_model->entryAt(rows.first().row());
}

void ManifestHistoryDialog::updateSelection()
{
    const relctl::ManifestHistoryEntry* target = selectedEntry();
    const relctl::ManifestHistoryEntry* current = m_model->currentEntry();
    const bool supported = m_schemaVersion >= kPromotionsSchemaVersion;
    const bool isCurrent = target && current && target->manifest.id == current->manifest.id;
    const bool allowed = m_permissions.canOperate();
    m_rollback->setEnabled(supported && allowed && target && current && !isCurrent && target->manifest.id);
    m_rollback->setToolTip(!supported ? tr("The database's relctl schema (version %1) predates rollback: run "
                                           "relctl migrate.")
                                            .arg(m_schemaVersion)
                           : !allowed  ? m_permissions.whyNotOperate()
                           : !target   ? tr("Select the manifest to restore.")
                           : isCurrent ? tr("This manifest is current already.")
                                       : tr("Make this manifest current again (asks for a reason)."));
    if (!target || !current) {
        m_preview->setHtml(tr("<p><i>Select an entry to see what rolling back to it would change.</i></p>"));
        return;
    }
    m_preview->setHtml(isCurrent
                           ? tr("<p>%1 is current.</p>").arg(manifestName(target->manifest))
                           : rollbackHtml(m_env, *current, *target, m_model->history().highWaterGeneration));
}

QString ManifestHistoryDialog::rollbackHtml(const QString& env, const relctl::ManifestHistoryEntry& current,
                                            const relctl::ManifestHistoryEntry& target,
                                            std::int64_t highWater)
{
    return tr("<p><b>%1</b>: %2 &nbsp;→&nbsp; <b>%3</b></p>"
              "<p>The high-water generation stays <b>%4</b>: a job with an older generation is still "
              "refused, and the next newer candidate is accepted as usual. While a job holds the lease the "
              "rollback is refused (busy): retry when it ends, or revoke the lease.</p>")
               .arg(env.toHtmlEscaped(), manifestName(current.manifest), manifestName(target.manifest))
               .arg(highWater) +
           manifestDiffHtml(diffManifests(current.manifest.manifest, target.manifest.manifest),
                            tr("now (%1)").arg(QString::fromStdString(current.manifest.release)),
                            tr("after (%1)").arg(QString::fromStdString(target.manifest.release)));
}

void ManifestHistoryDialog::rollBack()
{
    const relctl::ManifestHistoryEntry* target = selectedEntry();
    const relctl::ManifestHistoryEntry* current = m_model->currentEntry();
    if (!target || !current || !target->manifest.id)
        return;
    ConsoleAction action;
    action.kind = ConsoleAction::Kind::Rollback;
    action.env = m_env;
    action.manifest = *target->manifest.id;
    // Built before the dialog runs: a live reload while it is open replaces
    // the entries these point at.
    const QString what = tr("Roll back to %1 (generation %2)")
                             .arg(QString::fromStdString(target->manifest.release))
                             .arg(target->manifest.generation);
    const QString details = rollbackHtml(m_env, *current, *target, m_model->history().highWaterGeneration);
    ActionDialog dialog(action, what, this, details);
    if (dialog.exec() == QDialog::Accepted)
        emit actionRequested(dialog.action());
}

} // namespace relctl::ui
