// The connection dialog's "Test connection" over the in-memory backend
// (FakeBackend), offscreen: no database, milliseconds. Also the password
// prompts (the dialog's and the session's) and what the console says at
// start (its version, a refusal). The dialog owns no
// probe: the test it asks for reaches the backend through the session, the
// backend's scripted answer is what the dialog shows, and an answer to a
// form that has changed since is dropped. (test_connection probes real
// servers.)

#include "connectiondialog.h"
#include "connectionprobe.h"
#include "consolesession.h"
#include "consolestart.h"
#include "fakebackend.h"
#include "passwordprompt.h"
#include "relctl/version.h"

#include <QFile>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>
#include <memory>

using namespace relctl::ui;

namespace {

// A session over a fake, and the fake (owned by the session).
struct Fixture
{
    Fixture() : fake(new FakeBackend), session(std::unique_ptr<ConsoleBackend>(fake)) {}

    FakeBackend* fake;
    ConsoleSession session;
};

ConnectionTarget dsnTarget()
{
    return ConnectionTarget::fromDsn(QStringLiteral("host=db.internal dbname=relctl user=ops"));
}

} // namespace

class TestConnectionFake : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        // Settings of the tests' own, never the user's.
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
    }

    void aTestAsksTheSessionAndShowsTheBackendsAnswer()
    {
        Fixture f;
        ProbeResult scripted;
        scripted.ok = true;
        scripted.serverVersion = QStringLiteral("15.9");
        scripted.database = QStringLiteral("relctl_scripted");
        scripted.schemaVersion = 7;
        scripted.rttMs = 1.5;
        f.fake->setProbeResult(scripted);

        ConnectionDialog dialog(&f.session, dsnTarget());
        QSignalSpy tested(&dialog, &ConnectionDialog::tested);
        dialog.findChild<QPushButton*>(QStringLiteral("testConnection"))->click();
        QVERIFY(dialog.testResult().startsWith(QStringLiteral("Testing")));
        QVERIFY(dialog.isTesting());
        // The request reached the backend, for the target the form shows.
        QCOMPARE(f.fake->probes().size(), 1);
        QVERIFY(f.fake->probes().first() == dsnTarget());

        QVERIFY(tested.wait(2000));
        const auto result = tested.first().at(0).value<ProbeResult>();
        QCOMPARE(result.database, QStringLiteral("relctl_scripted"));
        QCOMPARE(result.target, dsnTarget().describe());
        QVERIFY2(dialog.testResult().startsWith(
                     QStringLiteral("Connected: PostgreSQL 15.9, database relctl_scripted, relctl schema "
                                    "version 7; round trip 1.5 ms.")),
                 qPrintable(dialog.testResult()));
        QVERIFY(!dialog.isTesting());

        // A failure is an answer too, in the dialog's words.
        ProbeResult refused;
        refused.message = QStringLiteral("connection refused");
        f.fake->setProbeResult(refused);
        dialog.testConnection();
        QVERIFY(tested.wait(2000));
        QCOMPARE(dialog.testResult(), QStringLiteral("Failed: connection refused"));

        // An answer to the form as it was is dropped once the form changes.
        f.fake->setHoldingAnswers(true);
        dialog.testConnection();
        QCOMPARE(f.fake->heldAnswers(), 1);
        dialog.findChild<QRadioButton*>(QStringLiteral("embeddedTarget"))->setChecked(true);
        QVERIFY(!dialog.isTesting());
        f.fake->releaseHeld();
        QTest::qWait(50);
        QCOMPARE(tested.size(), 2);
        QVERIFY(dialog.testResult().isEmpty());
        QCOMPARE(f.fake->probes().size(), 3);
    }

    // The result names the login, its relctl role and TLS, and warns of a
    // login that can neither read the trail nor decide.
    void aTestNamesTheLoginItsRoleAndTls()
    {
        Fixture f;
        ProbeResult scripted;
        scripted.ok = true;
        scripted.serverVersion = QStringLiteral("15.9");
        scripted.database = QStringLiteral("relctl");
        scripted.schemaVersion = 15;
        scripted.login = QStringLiteral("alice");
        scripted.permissions = Permissions(QStringLiteral("alice"), {QStringLiteral("relctl_manager")}, {});
        scripted.tls = true;
        f.fake->setProbeResult(scripted);
        ConnectionDialog dialog(&f.session, dsnTarget());
        QSignalSpy tested(&dialog, &ConnectionDialog::tested);
        dialog.testConnection();
        QVERIFY(tested.wait(2000));
        QVERIFY2(
            dialog.testResult().endsWith(QStringLiteral("login alice (manager: relctl_manager) · TLS: yes "
                                                        "(encrypted)")),
            qPrintable(dialog.testResult()));

        for (const QStringList& roles : {QStringList{QStringLiteral("relctl_job")}, QStringList{}}) {
            scripted.login = QStringLiteral("ci");
            scripted.permissions = Permissions(QStringLiteral("ci"), roles, {});
            scripted.tls = false;
            f.fake->setProbeResult(scripted);
            dialog.testConnection();
            QVERIFY(tested.wait(2000));
            const QString shown = dialog.testResult();
            QVERIFY2(shown.contains(QStringLiteral("TLS: no")), qPrintable(shown));
            QVERIFY2(
                shown.contains(QStringLiteral("Warning: login ci has no relctl_reviewer or relctl_manager "
                                              "role: this login can neither read the trail nor decide.")),
                qPrintable(shown));
        }
    }

    // An embedded database that is not running is not a failure: connecting
    // starts it, and the test says so.
    void aStoppedEmbeddedDatabaseIsNotAFailure()
    {
        Fixture f;
        ProbeResult scripted;
        scripted.message =
            QStringLiteral("The embedded database is not running: the console starts it when you connect.");
        QVERIFY(ConnectionProbe::notStarted(scripted));
        f.fake->setProbeResult(scripted);
        ConnectionDialog dialog(&f.session, ConnectionTarget::embedded());
        QSignalSpy tested(&dialog, &ConnectionDialog::tested);
        dialog.testConnection();
        QVERIFY(tested.wait(2000));
        QCOMPARE(dialog.testResult(), scripted.message);
    }

    // A test the server refused for want of a password asks for one, masked,
    // and tests again with it; it is kept in memory, never saved.
    void aWantedPasswordIsAskedForMasked()
    {
        Fixture f;
        const ConnectionTarget target =
            ConnectionTarget::fromDsn(QStringLiteral("host=asks.internal dbname=relctl user=ops"));
        ProbeResult refused;
        refused.message = QStringLiteral("connection to server failed: fe_sendauth: no password supplied");
        f.fake->setProbeResult(refused);
        ConnectionDialog dialog(&f.session, target);
        QSignalSpy tested(&dialog, &ConnectionDialog::tested);
        dialog.testConnection();
        QVERIFY(tested.wait(2000));
        QInputDialog* prompt = dialog.passwordPrompt();
        QVERIFY(prompt != nullptr && prompt->isVisible());
        QCOMPARE(prompt->textEchoMode(), QLineEdit::Password);
        QVERIFY(!target.hasRememberedPassword());

        f.fake->setProbeResult(ProbeResult{});
        prompt->setTextValue(QStringLiteral("typed-s3cret"));
        prompt->accept();
        QVERIFY(tested.wait(2000));
        QCOMPARE(f.fake->probes().size(), 2);
        QVERIFY(target.hasRememberedPassword());
        QCOMPARE(ConnectionTarget::passwordIn(QString::fromStdString(f.fake->probes().last().resolve())),
                 QStringLiteral("typed-s3cret"));
        QVERIFY(!f.fake->probes().last().describe().contains(QStringLiteral("typed-s3cret")));

        dialog.accept();
        QFile file(QSettings().fileName());
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(!file.readAll().contains("typed-s3cret"));
        target.rememberPassword(QString());
    }

    // A password typed into the connection string leaves it at the test: it
    // moves to the masked field, and the target sent carries none.
    void aPasswordTypedInTheDsnMovesOutOfSight()
    {
        Fixture f;
        ConnectionDialog dialog(&f.session, dsnTarget());
        auto* dsn = dialog.findChild<QLineEdit*>(QStringLiteral("dsn"));
        dsn->setText(QStringLiteral("host=typed.internal dbname=relctl password=in-the-clear"));
        dialog.testConnection();
        QCOMPARE(dsn->text(), QStringLiteral("host=typed.internal dbname=relctl"));
        QCOMPARE(dialog.findChild<QLineEdit*>(QStringLiteral("password"))->text(),
                 QStringLiteral("in-the-clear"));
        QCOMPARE(f.fake->probes().last().dsn, QStringLiteral("host=typed.internal dbname=relctl"));
        QCOMPARE(ConnectionTarget::passwordIn(QString::fromStdString(f.fake->probes().last().resolve())),
                 QStringLiteral("in-the-clear"));
        f.fake->probes().last().rememberPassword(QString());
    }

    // The console's own connection, refused for want of a password, asks for
    // one and connects again with it; cancelled, it does not ask again.
    void theSessionAsksForAWantedPassword()
    {
        // The fake's target is relctl's default: here, $RELCTL_DSN.
        qputenv("RELCTL_DSN", "host=session.internal dbname=relctl user=ops");
        const auto unset = qScopeGuard([] { qunsetenv("RELCTL_DSN"); });
        const ConnectionTarget target;
        Fixture f;
        QWidget window;
        PasswordPrompt prompt(&f.session, &window);
        f.session.start();
        QTRY_VERIFY(f.session.connection().connected);
        f.fake->dropConnection(QStringLiteral("FATAL:  password authentication failed for user \"ops\""));
        QTRY_VERIFY(prompt.dialog() != nullptr);
        QCOMPARE(prompt.dialog()->textEchoMode(), QLineEdit::Password);
        const qsizetype before = f.fake->targets().size();
        prompt.dialog()->setTextValue(QStringLiteral("session-s3cret"));
        prompt.dialog()->accept();
        QTRY_COMPARE(f.fake->targets().size(), before + 1);
        QVERIFY(prompt.dialog() == nullptr);
        QTRY_VERIFY(f.session.connection().connected);
        QCOMPARE(ConnectionTarget::passwordIn(QString::fromStdString(f.fake->targets().last().resolve())),
                 QStringLiteral("session-s3cret"));

        f.fake->dropConnection(QStringLiteral("fe_sendauth: no password supplied"));
        QTRY_VERIFY(prompt.dialog() != nullptr);
        prompt.dialog()->reject();
        QTRY_VERIFY(prompt.dialog() == nullptr);
        f.fake->dropConnection(QStringLiteral("fe_sendauth: no password supplied"));
        QTest::qWait(50);
        QVERIFY(prompt.dialog() == nullptr);
        target.rememberPassword(QString());
    }

    // A refusal to start is shown in a dialog where one can be seen, and the
    // version is the project's.
    void startupSaysItsVersionAndRefusals()
    {
        QVERIFY2(consoleVersion().contains(QString::fromStdString(relctl::describedVersion())),
                 qPrintable(consoleVersion()));
        const std::unique_ptr<QMessageBox> box(startupRefusalBox(QStringLiteral("--demo never opens --dsn")));
        QCOMPARE(box->icon(), QMessageBox::Critical);
        QCOMPARE(box->informativeText(), QStringLiteral("--demo never opens --dsn"));
        QVERIFY(!canShowDialogs()); // offscreen: no one would see it, so it is not shown
        QCOMPARE(refuseToStart(QStringLiteral("a test refusal"), 2, true), 2);
    }
};

QTEST_MAIN(TestConnectionFake)
#include "test_connection_fake.moc"
