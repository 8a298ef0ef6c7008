#include "connectiondialog.h"

#include "connectionprobe.h"
#include "consolesession.h"

#include <QButtonGroup>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QVBoxLayout>

namespace relctl::ui {

ConnectionDialog::ConnectionDialog(ConsoleSession* session, const ConnectionTarget& current, QWidget* parent)
    : QDialog(parent), m_session(session),
      m_default(new QRadioButton(tr("relctl's &default: $RELCTL_DSN, else libpq's PG* variables, "
                                    "else the embedded database"),
                                 this)),
      m_embedded(new QRadioButton(tr("The &embedded default database (started when needed)"), this)),
      m_dsnChoice(new QRadioButton(tr("This connection &string (libpq conninfo or URI):"), this)),
      // Always offered, whatever was saved: it is never saved itself (the
      // next run opens the saved connection), only opened.
      m_demo(new QRadioButton(tr("The de&mo's own database (a week of fabricated history)"), this)),
      m_dsn(new QLineEdit(this)), m_password(new QLineEdit(this)),
      m_test(new QPushButton(tr("&Test connection"), this)), m_result(new QLabel(this))
{
    setWindowTitle(tr("Connection"));
    setObjectName(QStringLiteral("connectionDialog"));
    m_default->setObjectName(QStringLiteral("defaultTarget"));
    m_embedded->setObjectName(QStringLiteral("embeddedTarget"));
    m_dsnChoice->setObjectName(QStringLiteral("dsnTarget"));
    m_demo->setObjectName(QStringLiteral("demoTarget"));
    m_dsn->setObjectName(QStringLiteral("dsn"));
    m_password->setObjectName(QStringLiteral("password"));
    m_test->setObjectName(QStringLiteral("testConnection"));
    m_result->setObjectName(QStringLiteral("testResult"));
    auto* group = new QButtonGroup(this);
    for (QRadioButton* b : {m_default, m_embedded, m_dsnChoice, m_demo})
        group->addButton(b);
    m_dsn->setPlaceholderText(QStringLiteral("host=db.internal dbname=relctl user=ops"));
    // A target holds no password (ConnectionTarget::fromDsn keeps it in
    // memory): the DSN is shown as it is.
    m_dsn->setText(current.kind == ConnectionTarget::Kind::Dsn ? current.dsn : QString());
    m_dsn->setToolTip(tr("A password typed here is used for this run only and never saved."));
    m_dsn->setClearButtonEnabled(true);
    m_password->setEchoMode(QLineEdit::Password);
    m_password->setPlaceholderText(tr("from ~/.pgpass or a service file, else asked when needed"));
    m_password->setToolTip(tr("Used for this run only, never saved. Leave it empty to use ~/.pgpass, "
                              "PGPASSFILE or a service file; the console asks when the server wants one."));
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
    auto* passwordRow = new QHBoxLayout;
    passwordRow->addSpacing(24);
    auto* passwordLabel = new QLabel(tr("&Password:"), this);
    passwordLabel->setBuddy(m_password);
    passwordRow->addWidget(passwordLabel);
    passwordRow->addWidget(m_password, 1);
    layout->addLayout(passwordRow);
    layout->addWidget(m_demo);
    auto* testRow = new QHBoxLayout;
    testRow->addWidget(m_test);
    testRow->addWidget(m_result, 1);
    layout->addLayout(testRow);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Connect"));
    layout->addWidget(buttons);
    QWidget* order[] = {m_default, m_embedded, m_dsnChoice, m_dsn, m_password, m_demo, m_test, buttons};
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
    if (m_demo->isChecked())
        return ConnectionTarget::demo();
    if (m_dsnChoice->isChecked())
        return ConnectionTarget::fromDsn(m_dsn->text());
    return {};
}

ConnectionTarget ConnectionDialog::targetWithPassword() const
{
    ConnectionTarget chosen = target();
    if (!m_password->text().isEmpty())
        chosen.rememberPassword(m_password->text());
    return chosen;
}

void ConnectionDialog::updateForm()
{
    m_dsn->setEnabled(m_dsnChoice->isChecked());
    // The embedded and demo clusters know the OS user: no password there.
    m_password->setEnabled(m_dsnChoice->isChecked() || m_default->isChecked());
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
    // A password typed into the connection string moves to the masked field,
    // out of sight.
    if (const QString typed = ConnectionTarget::passwordIn(m_dsn->text()); !typed.isEmpty()) {
        m_password->setText(typed);
        m_dsn->setText(ConnectionTarget::withoutPassword(m_dsn->text()));
    }
    const ConnectionTarget chosen = targetWithPassword();
    m_result->setText(tr("Testing %1…").arg(chosen.describe()));
    m_session->probeTarget(chosen);
}

bool ConnectionDialog::isTesting() const
{
    return m_session->isProbing();
}

void ConnectionDialog::showResult(const ProbeResult& result)
{
    if (result.ok) {
        // The role that gives the login what the summary says (a manager
        // has the reviewer's and the job's roles too: naming them adds
        // nothing).
        const QString summary = result.permissions.roleSummary();
        const QString role = QStringLiteral("relctl_") + summary;
        const QString who = result.permissions.roles().contains(role)
                                ? tr("login %1 (%2: %3)").arg(result.login, summary, role)
                                : tr("login %1 (%2)").arg(result.login, summary);
        QString text = tr("Connected: PostgreSQL %1, database %2, relctl schema version %3; "
                          "round trip %4 ms. · %5 · %6")
                           .arg(result.serverVersion, result.database)
                           .arg(result.schemaVersion)
                           .arg(result.rttMs, 0, 'f', 1)
                           .arg(who, result.tls ? tr("TLS: yes (encrypted)") : tr("TLS: no (not encrypted)"));
        // A login that can neither read the trail nor decide sees an empty
        // console and every action refused: say so before connecting.
        if (!result.permissions.canReadTrail() && !result.permissions.canOperate())
            text += QLatin1Char('\n') + tr("Warning: login %1 has no relctl_reviewer or relctl_manager role: "
                                           "this login can neither read the trail nor decide.")
                                            .arg(result.login);
        m_result->setText(text);
    } else if (ConnectionProbe::notStarted(result)) {
        m_result->setText(result.message);
    } else {
        m_result->setText(tr("Failed: %1").arg(result.message));
        if (ConnectionTarget::needsPassword(result.message))
            askForPassword(result);
    }
    emit tested(result);
}

void ConnectionDialog::askForPassword(const ProbeResult& result)
{
    if (m_prompt != nullptr)
        return; // one prompt at a time
    m_prompt = new QInputDialog(this);
    m_prompt->setObjectName(QStringLiteral("passwordPrompt"));
    m_prompt->setWindowTitle(tr("Password"));
    m_prompt->setLabelText(
        tr("The server wants a password for %1.\nIt is kept for this run only, never saved.")
            .arg(result.target));
    m_prompt->setTextEchoMode(QLineEdit::Password);
    m_prompt->setOkButtonText(tr("&Test again"));
    const ConnectionTarget asked = target();
    connect(m_prompt, &QInputDialog::textValueSelected, this, [this, asked](const QString& password) {
        asked.rememberPassword(password);
        m_password->setText(password);
        testConnection();
    });
    connect(m_prompt, &QDialog::finished, this, [this] {
        m_prompt->deleteLater();
        m_prompt = nullptr;
    });
    m_prompt->open();
}

QString ConnectionDialog::testResult() const
{
    return m_result->text();
}

void ConnectionDialog::accept()
{
    QSettings settings;
    targetWithPassword().save(settings); // the password stays in memory
    QDialog::accept();
}

} // namespace relctl::ui
