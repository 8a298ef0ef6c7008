// The console benchmark's hook (RELCTL_CONSOLE_REPORT, ui/console/startupreport.h)
// after the window is usable: one line per live update the session applied,
// which bench/consolebench.cpp reads to time one live event and a burst's lag.

#include "consolesession.h"
#include "fakebackend.h"
#include "mainwindow.h"
#include "startupreport.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace relctl::ui;

class TestStartupReport : public QObject
{
    Q_OBJECT

private slots:
    // The startup line stays first (the benchmark waits for it); a live
    // update applied before it follows it, then each later one in order,
    // each with its kind, environments, GUI time and a CLOCK_MONOTONIC time.
    void liveUpdatesFollowTheStartupLine()
    {
        FakeBackend* fake = new FakeBackend;
        relctl::EnvironmentRow prod;
        prod.name = "svc1.prod";
        prod.policy = "ordered";
        prod.supersede = "auto";
        prod.serialization = "enforced";
        fake->setEnvironments({prod});
        ConsoleSession session{std::unique_ptr<ConsoleBackend>(fake)};
        MainWindow window(&session);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("report.json"));
        qputenv("RELCTL_CONSOLE_REPORT", file.toLocal8Bit());
        QVERIFY(StartupReport::fromEnvironment(&window, &session));
        qunsetenv("RELCTL_CONSOLE_REPORT");
        // Applied before the window was usable: held, not written over by the first line.
        emit session.liveUpdateApplied(QStringLiteral("environments"), {QStringLiteral("early.env")}, 1234);
        window.show();
        session.start();
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(file), 5000);
        emit session.liveUpdateApplied(QStringLiteral("timeline"),
                                       {QStringLiteral("svc1.prod"), QStringLiteral("svc2.prod")}, 56789);

        QFile in(file);
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = in.readAll().split('\n');
        QList<QJsonObject> live;
        QJsonObject startup;
        for (const QByteArray& line : lines) {
            if (line.isEmpty())
                continue;
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            QVERIFY2(!o.isEmpty(), line.constData());
            if (startup.isEmpty()) {
                QVERIFY2(!o.contains(QStringLiteral("live")), "the startup line comes first");
                startup = o;
            } else if (o.contains(QStringLiteral("live"))) {
                const QJsonArray envs = o.value(QStringLiteral("envs")).toArray();
                // Only the updates of this test (the session may apply its own).
                if (envs.contains(QStringLiteral("early.env")) || envs.contains(QStringLiteral("svc2.prod")))
                    live << o;
            }
        }
        QVERIFY(lines.last().isEmpty()); // every line ends
        QCOMPARE(live.size(), 2);
        QCOMPARE(live[0].value(QStringLiteral("live")).toString(), QStringLiteral("environments"));
        QCOMPARE(live[0].value(QStringLiteral("envs")).toArray(), QJsonArray({QStringLiteral("early.env")}));
        QCOMPARE(qint64(live[0].value(QStringLiteral("gui_ns")).toDouble()), 1234);
        QCOMPARE(live[1].value(QStringLiteral("live")).toString(), QStringLiteral("timeline"));
        QCOMPARE(live[1].value(QStringLiteral("envs")).toArray(),
                 QJsonArray({QStringLiteral("svc1.prod"), QStringLiteral("svc2.prod")}));
        QCOMPARE(qint64(live[1].value(QStringLiteral("gui_ns")).toDouble()), 56789);
        const auto at = [](const QJsonObject& o, const char* key) {
            return qint64(o.value(QLatin1String(key)).toDouble());
        };
        QVERIFY(at(live[0], "at_ns") > 0);
        QVERIFY(at(live[0], "at_ns") <= at(startup, "usable_ns"));
        QVERIFY(at(live[1], "at_ns") >= at(startup, "usable_ns"));
    }
};

QTEST_MAIN(TestStartupReport)
#include "test_startupreport.moc"
