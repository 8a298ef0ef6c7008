#include "statusdialog.h"

#include "statuscard.h"

#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace relctl::ui {

StatusDialog::StatusDialog(QWidget* parent)
    : QDialog(parent), m_kind(new QComboBox(this)), m_key(new QLineEdit(this)), m_card(new StatusCard(this))
{
    setObjectName(QStringLiteral("statusDialog"));
    setWindowTitle(tr("What became of it?"));
    m_kind->addItem(tr("Job"), QVariant::fromValue(int(StatusLookup::Kind::Job)));
    m_kind->addItem(tr("Op id"), QVariant::fromValue(int(StatusLookup::Kind::Operation)));
    m_kind->setObjectName(QStringLiteral("statusKind"));
    m_kind->setToolTip(tr("A job's name (its newest operation) or one op id"));
    m_key->setObjectName(QStringLiteral("statusKey"));
    m_key->setPlaceholderText(tr("a job's name or an op id, then Enter"));
    m_key->setClearButtonEnabled(true);
    auto* ask = new QPushButton(tr("&Look up"), this);
    ask->setObjectName(QStringLiteral("statusLookUp"));
    ask->setAutoDefault(false);
    auto* row = new QHBoxLayout;
    row->addWidget(m_kind);
    row->addWidget(m_key, 1);
    row->addWidget(ask);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(m_card, 1);
    layout->addWidget(buttons);
    // Enter in the field looks up; it must not close the dialog (Close is
    // not a default button).
    buttons->button(QDialogButtonBox::Close)->setAutoDefault(false);
    connect(m_key, &QLineEdit::returnPressed, this, &StatusDialog::lookUpTyped);
    connect(ask, &QPushButton::clicked, this, &StatusDialog::lookUpTyped);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_card, &StatusCard::lookupRequested, this, &StatusDialog::lookUp);
    setFocusProxy(m_key);
    resize(680, 470);
}

void StatusDialog::lookUpTyped()
{
    const QString key = m_key->text().trimmed();
    if (key.isEmpty())
        return; // the server refuses an empty name; there is nothing to ask
    lookUp({StatusLookup::Kind(m_kind->currentData().toInt()), key});
}

void StatusDialog::lookUp(const StatusLookup& lookup)
{
    m_kind->setCurrentIndex(m_kind->findData(int(lookup.kind)));
    m_key->setText(lookup.key);
    m_card->showLookingUp(lookup);
    emit lookupRequested(lookup);
}

void StatusDialog::showStatus(const StatusLookup& lookup, const relctl::JobStatus& status)
{
    if (lookup == m_card->lookup())
        m_card->showStatus(lookup, status, QDateTime::currentMSecsSinceEpoch());
}

void StatusDialog::showFailure(const StatusLookup& lookup, const QString& message)
{
    if (lookup == m_card->lookup())
        m_card->showFailure(lookup, message);
}

} // namespace relctl::ui
