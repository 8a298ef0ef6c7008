// The console's connection handling and shell, offscreen, against real
// databases: the probe (off the GUI thread, newest wins), the dialog's
// settings, switching a live session to another database, passwords kept out
// of sight, the compiled-in icons, the dark palette and keyboard navigation.

#define RELCTL_TEST_NO_SHORT_NAME // core's namespace relctl is visible here
#include "auditview.h"
#include "connectiondialog.h"
#include "connectionprobe.h"
#include "connectiontarget.h"
#include "consolesession.h"
#include "environmentsmodel.h"
#include "environmentsview.h"
#include "fakebackend.h"
#include "icons.h"
#include "mainwindow.h"
#include "postgresbackend.h"
#include "rehearsalsview.h"
#include "relctl/database.h"
#include "relctl/embedded.h"
#include "supersessionsview.h"
#include "testdatabase.h"
#include "timelinewidget.h"
#include "tracepanel.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTreeView>
#include <QtTest>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace relctl::ui;

namespace {

ConnectionTarget targetOf(const TestDatabase& db)
{
    return ConnectionTarget::fromDsn(QString::fromStdString(db.dsn()));
}

void addEnvironments(const TestDatabase& db, const std::vector<std::string>& names)
{
    relctl::Database client(db.dsn());
    for (const std::string& name : names)
        client.addEnvironment({name, {}, {}});
}

QStringList environmentNames(const ConsoleSession& session)
{
    QStringList names;
    for (const relctl::EnvironmentRow& row : session.environments()->environments())
        names << QString::fromStdString(row.name);
    names.sort();
    return names;
}

// A unix socket that accepts connections and never answers: libpq waits on
// it until connect_timeout, which makes a probe slow on demand.
struct SilentServer
{
    QTemporaryDir dir;
    int fd = -1;
    SilentServer()
    {
        const QByteArray path = (dir.path() + QStringLiteral("/.s.PGSQL.5432")).toLocal8Bit();
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        if (static_cast<std::size_t>(path.size()) >= sizeof(address.sun_path))
            return;
        std::copy(path.begin(), path.end(), address.sun_path);
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
            ::listen(fd, 8) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ~SilentServer()
    {
        if (fd >= 0)
            ::close(fd);
    }
    bool isListening() const { return fd >= 0; }
    ConnectionTarget target() const
    {
        return ConnectionTarget::fromDsn(
            QStringLiteral("host=%1 port=5432 dbname=relctl user=ops connect_timeout=2").arg(dir.path()));
    }
};

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2b, 0x2b), base(0x1e, 0x1e, 0x1e), text(0xe6, 0xe6, 0xe6);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Highlight, QColor(0x3b, 0x7d, 0xd8));
    p.setColor(QPalette::HighlightedText, Qt::white);
    return p;
}

} // namespace

class TestConnection final : public QObject
{
    Q_OBJECT

    QTemporaryDir m_settings;

private slots:
    void initTestCase()
    {
        // Settings of the tests' own, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_settings.isValid());
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settings.path());
        QSettings().clear();
    }

    // A password in a connection string never stays in the target (so in
    // nothing saved or shown): it is kept in memory for this run, and only
    // the string libpq opens carries it.
    void aTargetHoldsNoPassword_data()
    {
        QTest::addColumn<QString>("dsn");
        QTest::addColumn<QString>("stripped");
        QTest::addColumn<QString>("password");
        QTest::addRow("conninfo") << QStringLiteral("host=db1 password=s3cret dbname=relctl")
                                  << QStringLiteral("host=db1 dbname=relctl") << QStringLiteral("s3cret");
        QTest::addRow("conninfo, spaced") << QStringLiteral("host=db2 password = s3cret")
                                          << QStringLiteral("host=db2") << QStringLiteral("s3cret");
        QTest::addRow("conninfo, quoted") << QStringLiteral("password='s3 c\\'ret' host=db3")
                                          << QStringLiteral("host=db3") << QStringLiteral("s3 c'ret");
        QTest::addRow("uri") << QStringLiteral("postgresql://ops:s3cret@db4:5432/relctl")
                             << QStringLiteral("postgresql://ops@db4:5432/relctl")
                             << QStringLiteral("s3cret");
        QTest::addRow("uri parameter")
            << QStringLiteral("postgresql://ops@db5/relctl?password=s3%20cret&sslmode=require")
            << QStringLiteral("postgresql://ops@db5/relctl?sslmode=require") << QStringLiteral("s3 cret");
        QTest::addRow("uri without password") << QStringLiteral("postgresql://ops@db6/relctl")
                                              << QStringLiteral("postgresql://ops@db6/relctl") << QString();
        QTest::addRow("conninfo without password") << QStringLiteral("host=db7 dbname=relctl")
                                                   << QStringLiteral("host=db7 dbname=relctl") << QString();
    }

    void aTargetHoldsNoPassword()
    {
        QFETCH(QString, dsn);
        QFETCH(QString, stripped);
        QFETCH(QString, password);
        const ConnectionTarget target = ConnectionTarget::fromDsn(dsn);
        QCOMPARE(target.dsn, stripped);
        QCOMPARE(target.describe(), stripped);
        QCOMPARE(ConnectionTarget::passwordIn(dsn), password);
        QCOMPARE(target.hasRememberedPassword(), !password.isEmpty());
        // libpq receives it, as typed (quoted or percent-encoded as needed).
        const QString opened = QString::fromStdString(target.resolve());
        QCOMPARE(ConnectionTarget::passwordIn(opened), password);
        QCOMPARE(ConnectionTarget::withoutPassword(opened), stripped);
        // Forgotten, the string is the user's own: libpq looks in ~/.pgpass.
        target.rememberPassword(QString());
        QCOMPARE(QString::fromStdString(target.resolve()), stripped);
    }

    // --demo opens its own database whatever is saved or set for relctl's
    // default; only a --dsn on the same command line contradicts it.
    void theDemoIsRefusedOnlyWithDsn()
    {
        const ConnectionTarget saved =
            ConnectionTarget::fromDsn(QStringLiteral("host=db.internal dbname=relctl"));
        QCOMPARE(demoRefusal(saved, false), QString());
        QCOMPARE(demoRefusal(ConnectionTarget(), false), QString());
        QCOMPARE(demoRefusal(ConnectionTarget::embedded(), false), QString());
        const QString refusal = demoRefusal(saved, true);
        QVERIFY2(refusal.contains(QStringLiteral("never a database named by --dsn")), qPrintable(refusal));
    }

    // libpq's and the server's words for "a password is wanted" are recognised.
    void aMissingPasswordIsRecognised()
    {
        QVERIFY(ConnectionTarget::needsPassword(QStringLiteral(
            "connection to server on socket \"/x\" failed: fe_sendauth: no password supplied")));
        QVERIFY(ConnectionTarget::needsPassword(
            QStringLiteral("FATAL:  password authentication failed for user \"ops\"")));
        QVERIFY(!ConnectionTarget::needsPassword(QStringLiteral("Connection refused")));
    }

    // The default is described by where it leads now, by the CLI's rule.
    void theDefaultSaysWhereItLeads()
    {
        const QStringList names{QStringLiteral("RELCTL_DSN"), QStringLiteral("PGHOST"),
                                QStringLiteral("PGSERVICE"), QStringLiteral("PGDATABASE")};
        QHash<QString, QByteArray> saved;
        for (const QString& name : names) {
            if (qEnvironmentVariableIsSet(name.toLatin1().constData()))
                saved.insert(name, qgetenv(name.toLatin1().constData()));
            qunsetenv(name.toLatin1().constData());
        }
        const ConnectionTarget target;
        QCOMPARE(target.describe(), QStringLiteral("relctl's default: the embedded database"));
        qputenv("PGHOST", "/run/postgresql");
        QCOMPARE(target.describe(), QStringLiteral("relctl's default: libpq's PG* variables"));
        qputenv("RELCTL_DSN", "host=db user=ops password=s3");
        QCOMPARE(target.describe(), QStringLiteral("relctl's default: host=db user=ops"));
        for (const QString& name : names) {
            qunsetenv(name.toLatin1().constData());
            if (saved.contains(name))
                qputenv(name.toLatin1().constData(), saved.value(name));
        }
    }

    void theProbeReportsServerAndSchema()
    {
        TestDatabase db;
        ConnectionProbe probe;
        QSignalSpy finished(&probe, &ConnectionProbe::finished);
        const quint64 serial = probe.probe(targetOf(db));
        QVERIFY(probe.isRunning());
        QVERIFY(finished.wait(15000));
        QCOMPARE(finished.first().at(0).value<quint64>(), serial);
        const auto result = finished.first().at(1).value<ProbeResult>();
        QVERIFY2(result.ok, qPrintable(result.message));
        QVERIFY2(result.serverVersion.startsWith(QStringLiteral("15")), qPrintable(result.serverVersion));
        QCOMPARE(result.database, QString::fromStdString(db.name()));
        QCOMPARE(result.schemaVersion,
                 std::stoi(db.scalar("SELECT max(version) FROM relctl.schema_migrations")));
        QVERIFY(result.rttMs > 0);
        QVERIFY(!probe.isRunning());
        // Who the connection is: the login, its relctl roles, and no TLS on
        // the test cluster's unix socket.
        QVERIFY2(QString::fromStdString(db.dsn()).contains(QStringLiteral("user=%1").arg(result.login)),
                 qPrintable(result.login));
        QVERIFY(result.permissions.known());
        QVERIFY(!result.tls);
    }

    // The dialog's test says who the connection is, and warns of a login
    // that can neither read the trail nor decide.
    void theTestShowsTheLoginItsRolesAndTls()
    {
        TestDatabase db;
        ConsoleSession session(std::make_unique<PostgresBackend>(targetOf(db), false));
        ConnectionDialog dialog(&session, targetOf(db));
        QSignalSpy tested(&dialog, &ConnectionDialog::tested);
        dialog.testConnection();
        QVERIFY(tested.wait(15000));
        const auto result = tested.first().at(0).value<ProbeResult>();
        QVERIFY2(result.ok, qPrintable(result.message));
        const QString shown = dialog.testResult();
        QVERIFY2(shown.contains(QStringLiteral("login %1 (manager: relctl_manager)").arg(result.login)),
                 qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("TLS: no")), qPrintable(shown));
        QVERIFY2(!shown.contains(QStringLiteral("Warning")), qPrintable(shown));

        // A job's login: warned.
        ConnectionDialog jobs(&session, ConnectionTarget::fromDsn(QString::fromStdString(db.jobDsn())));
        QSignalSpy jobTested(&jobs, &ConnectionDialog::tested);
        jobs.testConnection();
        QVERIFY(jobTested.wait(15000));
        const QString warned = jobs.testResult();
        QVERIFY2(warned.contains(QStringLiteral("login relctl_test_job (job: relctl_job)")),
                 qPrintable(warned));
        QVERIFY2(warned.contains(QStringLiteral("this login can neither read the trail nor decide")),
                 qPrintable(warned));
    }

    // Testing the embedded database starts nothing: where it does not exist
    // it is not created, and the dialog says connecting will do it.
    void testingTheEmbeddedDatabaseCreatesNothing()
    {
        // Readable by others: as root the cluster's server runs as postgres.
        QTemporaryDir home(QStringLiteral("/tmp/relctl-probe-XXXXXX"));
        QFile::setPermissions(home.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                               QFileDevice::ExeOwner | QFileDevice::ReadOther |
                                               QFileDevice::ExeOther);
        const QString data = home.filePath(QStringLiteral("data"));
        const QByteArray savedXdg = qgetenv("XDG_DATA_HOME");
        qputenv("XDG_DATA_HOME", data.toLocal8Bit());
        const auto restore = qScopeGuard([&savedXdg] {
            if (savedXdg.isEmpty())
                qunsetenv("XDG_DATA_HOME");
            else
                qputenv("XDG_DATA_HOME", savedXdg);
        });
        for (const ConnectionTarget& target : {ConnectionTarget::embedded(), ConnectionTarget::demo()}) {
            const ProbeResult result = ConnectionProbe::run(target);
            QVERIFY(!result.ok);
            QVERIFY2(ConnectionProbe::notStarted(result), qPrintable(result.message));
            QVERIFY2(
                result.message.contains(QStringLiteral("the console creates and starts it when you connect")),
                qPrintable(result.message));
        }
        ConsoleSession session(std::make_unique<PostgresBackend>(ConnectionTarget::embedded(), false));
        ConnectionDialog dialog(&session, ConnectionTarget::embedded());
        QSignalSpy tested(&dialog, &ConnectionDialog::tested);
        dialog.testConnection();
        QVERIFY(tested.wait(15000));
        QVERIFY2(
            dialog.testResult().startsWith(QStringLiteral("The embedded database has not been created yet")),
            qPrintable(dialog.testResult()));
        QVERIFY2(!QFileInfo::exists(data), "a connection test created the embedded database's directory");
        QCOMPARE(QDir(home.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());

        // Created but stopped: the test leaves it stopped. Running: it connects.
        relctl::EmbeddedCluster cluster = relctl::EmbeddedCluster::forCurrentUser();
        const auto stop = qScopeGuard([&cluster] { cluster.stop(); });
        cluster.ensureRunning();
        cluster.stop();
        const ProbeResult stopped = ConnectionProbe::run(ConnectionTarget::embedded());
        QVERIFY2(stopped.message ==
                     QStringLiteral(
                         "The embedded database is not running: the console starts it when you connect."),
                 qPrintable(stopped.message));
        QVERIFY(!cluster.running());
        cluster.ensureRunning();
        const ProbeResult running = ConnectionProbe::run(ConnectionTarget::embedded());
        QVERIFY2(running.ok, qPrintable(running.message));
        QVERIFY(!running.login.isEmpty());
    }

    void aDatabaseWithoutTheSchemaIsNamedAsSuch()
    {
        TestDatabase db(TestDatabase::Schema::Empty);
        ConnectionProbe probe;
        QSignalSpy finished(&probe, &ConnectionProbe::finished);
        probe.probe(targetOf(db));
        QVERIFY(finished.wait(15000));
        const auto result = finished.first().at(1).value<ProbeResult>();
        QVERIFY(!result.ok);
        QVERIFY2(result.message.contains(QStringLiteral("relctl migrate")), qPrintable(result.message));
    }

    void aFailedProbeSaysWhyWithoutBlocking()
    {
        // The silent server holds the probe for connect_timeout (2 s): the
        // GUI thread's event loop must keep turning all that time.
        SilentServer silent;
        QVERIFY(silent.isListening());
        ConnectionProbe probe;
        QSignalSpy finished(&probe, &ConnectionProbe::finished);
        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
        ticker.start(20);
        QElapsedTimer elapsed;
        elapsed.start();
        probe.probe(silent.target());
        QVERIFY(elapsed.elapsed() < 500); // probe() itself returns at once
        QVERIFY(finished.wait(15000));
        QVERIFY(elapsed.elapsed() >= 1500);
        QVERIFY2(ticks >= 40, qPrintable(QString::number(ticks)));
        const auto result = finished.first().at(1).value<ProbeResult>();
        QVERIFY(!result.ok);
        QVERIFY2(result.message.contains(QStringLiteral("timeout"), Qt::CaseInsensitive),
                 qPrintable(result.message));
        QCOMPARE(result.target, silent.target().describe());

        // A host that is not there at all fails fast, and says where it tried.
        probe.probe(ConnectionTarget::fromDsn(
            QStringLiteral("host=%1/nowhere dbname=relctl user=ops").arg(silent.dir.path())));
        QVERIFY(finished.wait(15000));
        const auto missing = finished.last().at(1).value<ProbeResult>();
        QVERIFY(!missing.ok);
        QVERIFY2(missing.message.contains(QStringLiteral("nowhere")), qPrintable(missing.message));
    }

    void aNewerProbeSupersedesAnOlderOne()
    {
        SilentServer silent;
        TestDatabase db;
        ConnectionProbe probe;
        QSignalSpy finished(&probe, &ConnectionProbe::finished);
        probe.probe(silent.target()); // slow, then fails
        const quint64 newer = probe.probe(targetOf(db));
        QVERIFY(finished.wait(15000));
        QCOMPARE(finished.first().at(0).value<quint64>(), newer);
        QVERIFY(finished.first().at(1).value<ProbeResult>().ok);
        // The older probe ends after its 2 s timeout and is dropped.
        QTest::qWait(3000);
        QCOMPARE(finished.size(), 1);
    }

    // The demo is offered whatever was saved (it is never saved itself), and
    // accepting it unchanged stays there.
    void theDialogAlwaysOffersTheDemo()
    {
        // The form needs no server: its session runs on the in-memory backend.
        ConsoleSession session(std::make_unique<FakeBackend>());
        ConnectionDialog onDemo(&session, ConnectionTarget::demo());
        QVERIFY(onDemo.findChild<QRadioButton*>(QStringLiteral("demoTarget"))->isChecked());
        QVERIFY(!onDemo.findChild<QRadioButton*>(QStringLiteral("embeddedTarget"))->isChecked());
        QCOMPARE(int(onDemo.target().kind), int(ConnectionTarget::Kind::Demo));
        onDemo.findChild<QRadioButton*>(QStringLiteral("embeddedTarget"))->setChecked(true);
        QCOMPARE(int(onDemo.target().kind), int(ConnectionTarget::Kind::Embedded));

        for (const ConnectionTarget& saved :
             {ConnectionTarget::embedded(), ConnectionTarget(),
              ConnectionTarget::fromDsn(QStringLiteral("host=db.internal dbname=relctl"))}) {
            ConnectionDialog elsewhere(&session, saved);
            auto* demo = elsewhere.findChild<QRadioButton*>(QStringLiteral("demoTarget"));
            QVERIFY(demo != nullptr && demo->isEnabled() && !demo->isChecked());
            QCOMPARE(elsewhere.target(), saved);
            demo->setChecked(true);
            QCOMPARE(int(elsewhere.target().kind), int(ConnectionTarget::Kind::Demo));
        }
    }

    // Passwords are typed masked: in the dialog's field, never in the clear.
    void thePasswordFieldIsMasked()
    {
        ConsoleSession session(std::make_unique<FakeBackend>());
        ConnectionDialog dialog(&session, ConnectionTarget::fromDsn(QStringLiteral("host=db.internal")));
        auto* password = dialog.findChild<QLineEdit*>(QStringLiteral("password"));
        QVERIFY(password != nullptr);
        QCOMPARE(password->echoMode(), QLineEdit::Password);
        QVERIFY(password->isEnabled());
        dialog.findChild<QRadioButton*>(QStringLiteral("embeddedTarget"))->setChecked(true);
        QVERIFY(!password->isEnabled()); // the embedded database knows the OS user
    }

    void theDialogStoresEachKind_data()
    {
        QTest::addColumn<QString>("choice");
        QTest::addColumn<QString>("dsn");
        QTest::addColumn<int>("kind");
        QTest::addRow("default") << QStringLiteral("defaultTarget") << QString()
                                 << int(ConnectionTarget::Kind::Default);
        QTest::addRow("embedded") << QStringLiteral("embeddedTarget") << QString()
                                  << int(ConnectionTarget::Kind::Embedded);
        QTest::addRow("dsn") << QStringLiteral("dsnTarget")
                             << QStringLiteral("host=db.internal dbname=relctl user=ops password=s3cret")
                             << int(ConnectionTarget::Kind::Dsn);
        QTest::addRow("uri") << QStringLiteral("dsnTarget")
                             << QStringLiteral("postgresql://ops:s3cret@db.internal/relctl")
                             << int(ConnectionTarget::Kind::Dsn);
    }

    void theDialogStoresEachKind()
    {
        QFETCH(QString, choice);
        QFETCH(QString, dsn);
        QFETCH(int, kind);
        // Start from another kind each time, so storing must overwrite it.
        const ConnectionTarget before = kind == int(ConnectionTarget::Kind::Dsn)
                                            ? ConnectionTarget::embedded()
                                            : ConnectionTarget::fromDsn(QStringLiteral("host=elsewhere"));
        {
            QSettings settings;
            before.save(settings);
        }
        ConsoleSession session(std::make_unique<FakeBackend>());
        {
            ConnectionDialog dialog(&session, ConnectionTarget::load(QSettings()));
            dialog.findChild<QRadioButton*>(choice)->setChecked(true);
            if (!dsn.isEmpty())
                dialog.findChild<QLineEdit*>(QStringLiteral("dsn"))->setText(dsn);
            dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
            QCOMPARE(dialog.result(), int(QDialog::Accepted));
        }
        const ConnectionTarget stored = ConnectionTarget::load(QSettings());
        QCOMPARE(int(stored.kind), kind);
        QCOMPARE(stored.dsn, ConnectionTarget::withoutPassword(dsn));

        // The file holds no password, and only its owner may read it.
        const QString file = QSettings().fileName();
        QFile saved(file);
        QVERIFY2(saved.open(QIODevice::ReadOnly), qPrintable(file));
        const QByteArray text = saved.readAll();
        QVERIFY2(!text.contains("s3cret"), text.constData());
        QCOMPARE(saved.permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther |
                                        QFileDevice::WriteGroup | QFileDevice::WriteOther),
                 QFileDevice::Permissions());
        // The password stays in memory for this run: the stored target opens with it.
        if (!dsn.isEmpty())
            QCOMPARE(ConnectionTarget::passwordIn(QString::fromStdString(stored.resolve())),
                     QStringLiteral("s3cret"));

        // Opened again, the dialog shows the stored choice, without the password.
        ConnectionDialog again(&session, stored);
        QVERIFY(again.findChild<QRadioButton*>(choice)->isChecked());
        const QString shown = again.findChild<QLineEdit*>(QStringLiteral("dsn"))->text();
        QVERIFY2(!shown.contains(QStringLiteral("s3cret")), qPrintable(shown));
        QCOMPARE(again.target(), stored);
    }

    // A password an older version saved is read into memory and removed from
    // the file at the next save, whatever mode is chosen then.
    void anOldSavedPasswordIsRemoved()
    {
        {
            QSettings old;
            old.setValue(QStringLiteral("connection/mode"), QStringLiteral("dsn"));
            old.setValue(QStringLiteral("connection/dsn"),
                         QStringLiteral("host=old.internal password=0ld5ecret"));
        }
        const ConnectionTarget loaded = ConnectionTarget::load(QSettings());
        QCOMPARE(loaded.dsn, QStringLiteral("host=old.internal"));
        QVERIFY(loaded.hasRememberedPassword());
        {
            QSettings settings;
            ConnectionTarget::embedded().save(settings);
        }
        QFile file(QSettings().fileName());
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY2(!text.contains("0ld5ecret"), text.constData());
        QVERIFY2(text.contains("host=old.internal"), text.constData()); // kept for switching back
        ConnectionTarget::fromDsn(QStringLiteral("host=old.internal")).rememberPassword(QString());

        // release-console removes it at start, before anything connects or is saved.
        {
            QSettings old;
            old.setValue(QStringLiteral("connection/dsn"),
                         QStringLiteral("postgresql://ops:0ld5ecret@old.internal/relctl"));
        }
        {
            QSettings settings;
            ConnectionTarget::removeSavedPassword(settings);
        }
        QFile again(QSettings().fileName());
        QVERIFY(again.open(QIODevice::ReadOnly));
        const QByteArray scrubbed = again.readAll();
        QVERIFY2(!scrubbed.contains("0ld5ecret"), scrubbed.constData());
        QVERIFY(ConnectionTarget::fromDsn(QStringLiteral("postgresql://ops@old.internal/relctl"))
                    .hasRememberedPassword());
        QCOMPARE(again.permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther),
                 QFileDevice::Permissions());
    }

    void okSwitchesTheLiveSession()
    {
        TestDatabase first, second;
        addEnvironments(first, {"alpha"});
        addEnvironments(second, {"beta", "gamma"});
        ConsoleSession session(std::make_unique<PostgresBackend>(targetOf(first), false));
        MainWindow window(&session);
        window.setConnectionTarget(targetOf(first));
        window.show();
        session.start();
        QTRY_COMPARE_WITH_TIMEOUT(environmentNames(session), QStringList{QStringLiteral("alpha")}, 15000);
        auto* target = window.statusBar()->findChild<QLabel*>(QStringLiteral("connectionTarget"));
        auto* server = window.statusBar()->findChild<QLabel*>(QStringLiteral("connectionServer"));
        QVERIFY(target && server);
        QCOMPARE(target->toolTip(), targetOf(first).describe());

        // File ▸ Connection…: test the second database, then connect to it.
        window.findChild<QAction*>(QStringLiteral("connection"))->trigger();
        ConnectionDialog* dialog = window.findChild<ConnectionDialog*>();
        QVERIFY(dialog && dialog->isVisible());
        QVERIFY(dialog->findChild<QRadioButton*>(QStringLiteral("dsnTarget"))->isChecked());
        dialog->findChild<QLineEdit*>(QStringLiteral("dsn"))->setText(QString::fromStdString(second.dsn()));
        QSignalSpy tested(dialog, &ConnectionDialog::tested);
        dialog->findChild<QPushButton*>(QStringLiteral("testConnection"))->click();
        QVERIFY(dialog->testResult().startsWith(QStringLiteral("Testing")));
        QVERIFY(tested.wait(15000));
        QVERIFY2(dialog->testResult().contains(QString::fromStdString(second.name())),
                 qPrintable(dialog->testResult()));
        dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();

        QTRY_COMPARE_WITH_TIMEOUT(environmentNames(session),
                                  (QStringList{QStringLiteral("beta"), QStringLiteral("gamma")}), 15000);
        QTRY_COMPARE_WITH_TIMEOUT(target->toolTip(), targetOf(second).describe(), 5000);
        // On the bar itself, at most 260 px of it, elided in the middle.
        QVERIFY(target->fontMetrics().horizontalAdvance(target->text()) <= 260);
        QVERIFY2(server->text().contains(QString::fromStdString(second.name())), qPrintable(server->text()));
        // The version without its build's words, as "PostgreSQL 15.18": the
        // status bar is one line, shared with the notices.
        QVERIFY2(QRegularExpression(QStringLiteral("^PostgreSQL [0-9.]+, database "))
                     .match(server->text())
                     .hasMatch(),
                 qPrintable(server->text()));
        QCOMPARE(ConnectionTarget::load(QSettings()), targetOf(second));
    }

    void iconsLoadFromTheResources_data()
    {
        QTest::addColumn<QString>("name");
        for (const char* name : {"app", "approve", "connection", "deny", "export", "follow-now", "freeze",
                                 "rehearsal", "reload", "revoke", "trace", "unfreeze"})
            QTest::addRow("%s", name) << QString::fromLatin1(name);
    }

    void iconsLoadFromTheResources()
    {
        QFETCH(QString, name);
        const QIcon icon = consoleIcon(name);
        QVERIFY(!icon.isNull());
        // Rendered by the SVG engine at any size, crisp at twice the scale.
        for (int size : {16, 24, 48}) {
            const QImage image = icon.pixmap(QSize(size, size), 2.0).toImage();
            QCOMPARE(image.size(), QSize(size * 2, size * 2));
            QVERIFY2(qAlpha(image.pixel(size, size)) == 255, "the centre is painted");
            QVERIFY2(qAlpha(image.pixel(0, 0)) < 255, "the corner is transparent");
        }
    }

    void aDarkPaletteReachesTheViews()
    {
        const QPalette before = QApplication::palette();
        QApplication::setPalette(darkPalette());
        {
            ConsoleSession session(std::make_unique<PostgresBackend>(
                ConnectionTarget::fromDsn(QStringLiteral("host=/nonexistent")), false));
            MainWindow window(&session);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            for (QWidget* view : std::initializer_list<QWidget*>{
                     window.environmentsView()->table()->viewport(), window.auditView()->table()->viewport(),
                     window.tracePanel()->findChild<QTextBrowser*>()->viewport(),
                     window.supersessionsView()->findChild<QListWidget*>()->viewport(),
                     window.rehearsalsView()
                         ->findChild<QTextBrowser*>(QStringLiteral("rehearsalExplanation"))
                         ->viewport()}) {
                const QImage image = view->grab().toImage();
                const QColor corner = image.pixelColor(image.width() - 2, image.height() - 2);
                QVERIFY2(corner.lightness() < 80, view->parentWidget()->metaObject()->className());
            }
        }
        QApplication::setPalette(before);
    }

    void rehearsalsOfferEveryScenario()
    {
        ConsoleSession session(std::make_unique<PostgresBackend>(
            ConnectionTarget::fromDsn(QStringLiteral("host=/nonexistent")), false));
        MainWindow window(&session);
        // Every scenario, checked, its explanation in the tooltip; Run ready, Cancel not.
        auto* list = window.rehearsalsView()->findChild<QListWidget*>(QStringLiteral("rehearsalScenarios"));
        QVERIFY(list);
        QCOMPARE(list->count(), static_cast<int>(relctl::rehearsal::scenarios().size()));
        for (int row = 0; row < list->count(); ++row) {
            QCOMPARE(list->item(row)->checkState(), Qt::Checked);
            QVERIFY(list->item(row)->toolTip().contains(
                QString::fromStdString(
                    relctl::rehearsal::scenarios()[static_cast<std::size_t>(row)].explanation)
                    .toHtmlEscaped()));
        }
        QVERIFY(
            window.rehearsalsView()->findChild<QPushButton*>(QStringLiteral("rehearsalRun"))->isEnabled());
        QVERIFY(!window.rehearsalsView()
                     ->findChild<QPushButton*>(QStringLiteral("rehearsalCancel"))
                     ->isEnabled());
        QVERIFY(
            !window.rehearsalsView()->findChild<QPushButton*>(QStringLiteral("rehearsalSave"))->isEnabled());
    }

    void focusShortcutsReachEveryView_data()
    {
        QTest::addColumn<int>("key");
        QTest::addColumn<QString>("view");
        QTest::addRow("timeline") << int(Qt::Key_1) << QStringLiteral("timeline");
        QTest::addRow("environments") << int(Qt::Key_2) << QStringLiteral("environments");
        QTest::addRow("audit") << int(Qt::Key_3) << QStringLiteral("audit");
        QTest::addRow("trace") << int(Qt::Key_4) << QStringLiteral("trace");
        QTest::addRow("approvals") << int(Qt::Key_5) << QStringLiteral("approvals");
        QTest::addRow("rehearsals") << int(Qt::Key_6) << QStringLiteral("rehearsals");
    }

    void focusShortcutsReachEveryView()
    {
        QFETCH(int, key);
        QFETCH(QString, view);
        ConsoleSession session(std::make_unique<PostgresBackend>(
            ConnectionTarget::fromDsn(QStringLiteral("host=/nonexistent")), false));
        MainWindow window(&session);
        window.show();
        QApplication::setActiveWindow(&window);
        QVERIFY(QTest::qWaitForWindowActive(&window));
        const QHash<QString, QWidget*> views{
            {QStringLiteral("timeline"), window.timeline()},
            {QStringLiteral("environments"), window.environmentsView()->table()},
            {QStringLiteral("audit"), window.auditView()->table()},
            {QStringLiteral("trace"), window.tracePanel()->findChild<QTextBrowser*>()},
            {QStringLiteral("approvals"), window.supersessionsView()->findChild<QListWidget*>()},
            {QStringLiteral("rehearsals"),
             window.rehearsalsView()->findChild<QListWidget*>(QStringLiteral("rehearsalScenarios"))},
        };
        QWidget* expected = views.value(view);
        QVERIFY(expected);
        // Start somewhere else, so the shortcut has to move the focus.
        QWidget* elsewhere =
            view == QStringLiteral("timeline") ? views.value(QStringLiteral("audit")) : window.timeline();
        elsewhere->setFocus();
        QTRY_COMPARE(QApplication::focusWidget(), elsewhere);
        QTest::keyClick(&window, Qt::Key(key), Qt::ControlModifier);
        QTRY_COMPARE(QApplication::focusWidget(), expected);
        QVERIFY(expected->isVisible());
    }

    void enterOnAnEnvironmentOpensItsActions()
    {
        TestDatabase db;
        addEnvironments(db, {"prod"});
        ConsoleSession session(std::make_unique<PostgresBackend>(targetOf(db), false));
        MainWindow window(&session);
        window.show();
        QApplication::setActiveWindow(&window);
        QVERIFY(QTest::qWaitForWindowActive(&window));
        session.start();
        QTRY_COMPARE_WITH_TIMEOUT(session.environments()->rowCount(), 1, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(session.connection().schemaVersion >= 2, 10000);
        QTreeView* table = window.environmentsView()->table();
        QTest::keyClick(&window, Qt::Key_2, Qt::ControlModifier);
        QTRY_COMPARE(QApplication::focusWidget(), table);
        // The focus makes the first row current; Enter selects it and offers its actions.
        QTRY_VERIFY(table->currentIndex().isValid());
        QVERIFY(table->selectionModel()->selectedRows().isEmpty());
        QTest::keyClick(table, Qt::Key_Return);
        QMenu* menu = nullptr;
        QTRY_VERIFY(
            (menu = window.environmentsView()->findChild<QMenu*>(QStringLiteral("environmentActions"))) &&
            menu->isVisible());
        QStringList offered;
        for (QAction* a : menu->actions())
            if (a->isEnabled() && !a->isSeparator())
                offered << a->objectName();
        // Not frozen, no lease: of the operator actions only freezing applies;
        // the manifest history is always there.
        QCOMPARE(offered, (QStringList{QStringLiteral("freeze"), QStringLiteral("manifestHistory")}));
        menu->close();
    }
};

QTEST_MAIN(TestConnection)
#include "test_connection.moc"
