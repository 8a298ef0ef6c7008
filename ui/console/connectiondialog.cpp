#include "connectiondialog.h"

#include "consolesession.h"

#include <QButtonGroup>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QVBoxLayout>

namespace relctl::ui {

ConnectionDialog::ConnectionDialog(ConsoleSession* session, const ConnectionTarget& current, QWidget* parent)
    : QDialog(parent), m_session(session), m_saved(current),
      m_default(new QRadioButton(tr("relctl's &default: $RELCTL_DSN, else libpq's PG* variables, "
                                    "else the embedded database"),
                                 this)),
      m_embedded(new QRadioButton(tr("The &embedded default database (started when needed)"), this)),
      m_dsnChoice(new QRadioButton(tr("This connection &string (libpq conninfo or URI):"), this)),
      // Offered only while the console shows the demo: choosing it is staying.
      m_demo(current.kind == ConnectionTarget::Kind::Demo
                 ? new QRadioButton(tr("The de&mo's own database (a week of fabricated history)"), this)
                 : nullptr),
      m_dsn(new QLineEdit(this)), m_test(new QPushButton(tr("&Test connection"), this)),
      m_result(new QLabel(this))
{
    setWindowTitle(tr("Connection"));
    setObjectName(QStringLiteral("connectionDialog"));
    m_default->setObjectName(QStringLiteral("defaultTarget"));
    m_embedded->setObjectName(QStringLiteral("embeddedTarget"));
    m_dsnChoice->setObjectName(QStringLiteral("dsnTarget"));
    if (m_demo != nullptr)
        m_demo->setObjectName(QStringLiteral("demoTarget"));
    m_dsn->setObjectName(QStringLiteral("dsn"));
    m_test->setObjectName(QStringLiteral("testConnection"));
    m_result->setObjectName(QStringLiteral("testResult"));
    auto* group = new QButtonGroup(this);
    for (QRadioButton* b : {m_default, m_embedded, m_dsnChoice, m_demo})
        if (b != nullptr)
            group->addButton(b);
    m_dsn->setPlaceholderText(QStringLiteral("host=db.internal dbname=relctl user=ops"));
    // A saved password is never shown again: the field holds the masked form,
    // and target() puts the password back where the mask still stands.
    m_dsn->setText(current.kind == ConnectionTarget::Kind::Dsn ? current.describe() : QString());
    m_dsn->setToolTip(tr("A password shown as *** is the saved one; type a new one to replace it."));
    m_dsn->setClearButtonEnabled(true);
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_result->setMinimumHeight(m_result->fontMetrics().lineSpacing() * 3);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Where the console reads leases and the audit trail:"), this));
    layout->addWidget(m_default);
    layout->addWidget(m_embedded);
    layout->addWidget(m_dsnChoice);
    auto* dsnRow = new QHBoxLayout;
    dsnRow->addSpacing(24);
    dsnRow->addWidget(m_dsn, 1);
    layout->addLayout(dsnRow);
    if (m_demo != nullptr)
        layout->addWidget(m_demo);
    auto* testRow = new QHBoxLayout;
    testRow->addWidget(m_test);
    testRow->addWidget(m_result, 1);
    layout->addLayout(testRow);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Connect"));
    layout->addWidget(buttons);
    QWidget* order[] = {m_default, m_embedded, m_dsnChoice, m_dsn, m_demo, m_test, buttons};
    QWidget* previous = nullptr;
    for (QWidget* w : order) {
        if (w == nullptr)
            continue;
        if (previous != nullptr)
            setTabOrder(previous, w);
        previous = w;
    }

    switch (current.kind) {
    case ConnectionTarget::Kind::Default:
        m_default->setChecked(true);
        break;
    case ConnectionTarget::Kind::Embedded:
        m_embedded->setChecked(true);
        break;
    case ConnectionTarget::Kind::Demo:
        m_demo->setChecked(true);
        break;
    case ConnectionTarget::Kind::Dsn:
        m_dsnChoice->setChecked(true);
        break;
    }

    connect(group, &QButtonGroup::buttonToggled, this, &ConnectionDialog::updateForm);
    connect(m_dsn, &QLineEdit::textChanged, this, &ConnectionDialog::updateForm);
    connect(m_test, &QPushButton::clicked, this, &ConnectionDialog::testConnection);
    connect(m_session, &ConsoleSession::probeFinished, this, &ConnectionDialog::showResult);
    connect(buttons, &QDialogButtonBox::accepted, this, &ConnectionDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ConnectionDialog::reject);
    updateForm();
    resize(sizeHint().expandedTo(QSize(560, 0)));
}

ConnectionTarget ConnectionDialog::target() const
{
    if (m_embedded->isChecked())
        return ConnectionTarget::embedded();
    if (m_demo != nullptr && m_demo->isChecked())
        return ConnectionTarget::demo();
    if (m_dsnChoice->isChecked())
        return ConnectionTarget::fromEditedDsn(m_dsn->text(), m_saved);
    return {};
}

void ConnectionDialog::updateForm()
{
    m_dsn->setEnabled(m_dsnChoice->isChecked());
    // An empty DSN would quietly mean "default": say so instead.
    const bool complete = !m_dsnChoice->isChecked() || !m_dsn->text().trimmed().isEmpty();
    m_test->setEnabled(complete);
    if (auto* buttons = findChild<QDialogButtonBox*>())
        buttons->button(QDialogButtonBox::Ok)->setEnabled(complete);
    // A result answers the form as it was: clear it once the form changes.
    m_session->cancelProbe();
    m_result->setText(complete ? QString() : tr("Enter a connection string."));
}

void ConnectionDialog::testConnection()
{
    m_result->setText(tr("Testing %1…").arg(target().describe()));
    m_session->probeTarget(target());
}

bool ConnectionDialog::isTesting() const
{
    return m_session->isProbing();
}

void ConnectionDialog::showResult(const ProbeResult& result)
{
    if (result.ok) {
        m_result->setText(tr("Connected: PostgreSQL %1, database %2, relctl schema version %3; "
                             "round trip %4 ms.")
                              .arg(result.serverVersion, result.database)
                              .arg(result.schemaVersion)
                              .arg(result.rttMs, 0, 'f', 1));
    } else {
        m_result->setText(tr("Failed: %1").arg(result.message));
    }
    emit tested(result);
}

QString ConnectionDialog::testResult() const
{
    return m_result->text();
}

void ConnectionDialog::accept()
{
    QSettings settings;
    target().save(settings);
    QDialog::accept();
}

} // namespace relctl::ui
