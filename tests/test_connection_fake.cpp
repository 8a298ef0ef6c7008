// The connection dialog's "Test connection" over the in-memory backend
// (FakeBackend), offscreen: no database, milliseconds. The dialog owns no
// probe: the test it asks for reaches the backend through the session, the
// backend's scripted answer is what the dialog shows, and an answer to a
// form that has changed since is dropped. (test_connection probes real
// servers.)

#include "connectiondialog.h"
#include "consolesession.h"
#include "fakebackend.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QtTest>

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
        QCOMPARE(dialog.testResult(),
                 QStringLiteral("Connected: PostgreSQL 15.9, database relctl_scripted, relctl schema "
                                "version 7; round trip 1.5 ms."));
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
};

QTEST_MAIN(TestConnectionFake)
#include "test_connection_fake.moc"
