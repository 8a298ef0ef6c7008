// Unit tests for the input grammar relctl accepts: durations, positive
// integers (generations, tokens), environment names and lease handles.

#include "relctl/error.h"
#include "relctl/parse.h"

#include <QtTest>

using namespace std::chrono_literals;

class TestParse final : public QObject
{
    Q_OBJECT

private slots:
    void durations_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("ms");
        QTest::addRow("bare integer is seconds") << QStringLiteral("30") << true << qint64(30000);
        QTest::addRow("milliseconds") << QStringLiteral("250ms") << true << qint64(250);
        QTest::addRow("seconds") << QStringLiteral("45s") << true << qint64(45000);
        QTest::addRow("minutes") << QStringLiteral("10m") << true << qint64(600000);
        QTest::addRow("hours") << QStringLiteral("2h") << true << qint64(7200000);
        QTest::addRow("zero") << QStringLiteral("0s") << true << qint64(0);
        QTest::addRow("empty") << QString() << false << qint64(0);
        QTest::addRow("unit only") << QStringLiteral("ms") << false << qint64(0);
        QTest::addRow("negative") << QStringLiteral("-5s") << false << qint64(0);
        QTest::addRow("plus sign") << QStringLiteral("+5s") << false << qint64(0);
        QTest::addRow("fraction") << QStringLiteral("1.5s") << false << qint64(0);
        QTest::addRow("unknown unit") << QStringLiteral("5d") << false << qint64(0);
        QTest::addRow("space") << QStringLiteral("5 s") << false << qint64(0);
        QTest::addRow("upper case unit") << QStringLiteral("5S") << false << qint64(0);
        QTest::addRow("overflow") << QStringLiteral("9223372036854775807h") << false << qint64(0);
        QTest::addRow("too many digits") << QStringLiteral("99999999999999999999") << false << qint64(0);
    }

    void durations()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qint64, ms);
        auto d = relctl::parseDuration(text.toStdString());
        QCOMPARE(d.has_value(), valid);
        if (valid)
            QCOMPARE(qint64(d->count()), ms);
    }

    void positiveIntegers_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("value");
        QTest::addRow("one") << QStringLiteral("1") << true << qint64(1);
        QTest::addRow("max int64") << QStringLiteral("9223372036854775807") << true
                                   << qint64(9223372036854775807LL);
        QTest::addRow("leading zeros") << QStringLiteral("007") << true << qint64(7);
        QTest::addRow("zero") << QStringLiteral("0") << false << qint64(0);
        QTest::addRow("negative") << QStringLiteral("-1") << false << qint64(0);
        QTest::addRow("above int64") << QStringLiteral("9223372036854775808") << false << qint64(0);
        QTest::addRow("hex") << QStringLiteral("0x10") << false << qint64(0);
        QTest::addRow("trailing text") << QStringLiteral("12abc") << false << qint64(0);
        QTest::addRow("empty") << QString() << false << qint64(0);
    }

    void positiveIntegers()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qint64, value);
        auto n = relctl::parsePositiveInt(text.toStdString());
        QCOMPARE(n.has_value(), valid);
        if (valid)
            QCOMPARE(qint64(*n), value);
    }

    void environmentNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("valid");
        QTest::addRow("simple") << QStringLiteral("prod") << true;
        QTest::addRow("digits first") << QStringLiteral("1st") << true;
        QTest::addRow("punctuation") << QStringLiteral("eu-west.prod_2") << true;
        QTest::addRow("63 characters") << QString(63, QLatin1Char('a')) << true;
        QTest::addRow("64 characters") << QString(64, QLatin1Char('a')) << false;
        QTest::addRow("empty") << QString() << false;
        QTest::addRow("upper case") << QStringLiteral("Prod") << false;
        QTest::addRow("leading dash") << QStringLiteral("-prod") << false;
        QTest::addRow("leading dot") << QStringLiteral(".prod") << false;
        QTest::addRow("colon") << QStringLiteral("pr:od") << false;
        QTest::addRow("space") << QStringLiteral("pr od") << false;
        QTest::addRow("slash") << QStringLiteral("a/b") << false;
    }

    void environmentNames()
    {
        QFETCH(QString, name);
        QFETCH(bool, valid);
        QCOMPARE(relctl::isValidEnvironmentName(name.toStdString()), valid);
    }

    void handles_data()
    {
        const QString id = QStringLiteral("0123456789abcdef0123456789abcdef");
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("env");
        QTest::addColumn<qint64>("token");
        QTest::addRow("valid") << QStringLiteral("prod:42:") + id << true << QStringLiteral("prod")
                               << qint64(42);
        QTest::addRow("dotted env") << QStringLiteral("eu.prod-1:7:") + id << true
                                    << QStringLiteral("eu.prod-1") << qint64(7);
        QTest::addRow("missing id") << QStringLiteral("prod:42") << false << QString() << qint64(0);
        QTest::addRow("short id") << QStringLiteral("prod:42:0123") << false << QString() << qint64(0);
        QTest::addRow("upper-case id")
            << QStringLiteral("prod:42:") + id.toUpper() << false << QString() << qint64(0);
        QTest::addRow("uuid with dashes") << QStringLiteral("prod:42:01234567-89ab-cdef-0123-456789abcdef")
                                          << false << QString() << qint64(0);
        QTest::addRow("zero token") << QStringLiteral("prod:0:") + id << false << QString() << qint64(0);
        QTest::addRow("negative token") << QStringLiteral("prod:-1:") + id << false << QString() << qint64(0);
        QTest::addRow("bad env") << QStringLiteral("Prod:1:") + id << false << QString() << qint64(0);
        QTest::addRow("extra field") << QStringLiteral("prod:1:") + id + QStringLiteral(":x") << false
                                     << QString() << qint64(0);
        QTest::addRow("empty") << QString() << false << QString() << qint64(0);
    }

    void handles()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(QString, env);
        QFETCH(qint64, token);
        auto h = relctl::parseHandle(text.toStdString());
        QCOMPARE(h.has_value(), valid);
        if (!valid)
            return;
        QCOMPARE(QString::fromStdString(h->env), env);
        QCOMPARE(qint64(h->token), token);
        QCOMPARE(QString::fromStdString(h->toString()), text); // round trip
    }

    void refusalReasonsMapOntoExitCodes_data()
    {
        QTest::addColumn<QString>("reason");
        QTest::addColumn<int>("code");
        QTest::addRow("stale") << QStringLiteral("STALE_GENERATION") << 4;
        QTest::addRow("expired") << QStringLiteral("LEASE_EXPIRED") << 5;
        QTest::addRow("superseded") << QStringLiteral("LEASE_SUPERSEDED") << 5;
        QTest::addRow("released") << QStringLiteral("LEASE_RELEASED") << 5;
        QTest::addRow("revoked") << QStringLiteral("LEASE_REVOKED") << 5;
        QTest::addRow("bad id") << QStringLiteral("BAD_LEASE_ID") << 7;
        QTest::addRow("unknown lease") << QStringLiteral("UNKNOWN_LEASE") << 7;
        QTest::addRow("busy") << QStringLiteral("busy") << 3;
        QTest::addRow("frozen") << QStringLiteral("DISPATCH_FROZEN") << 6;
        QTest::addRow("unknown reason") << QStringLiteral("SOMETHING_NEW") << 1;
    }

    void refusalReasonsMapOntoExitCodes()
    {
        QFETCH(QString, reason);
        QFETCH(int, code);
        QCOMPARE(static_cast<int>(relctl::exitCodeForReason(reason.toStdString())), code);
    }

    void formatsDurations()
    {
        QCOMPARE(QString::fromStdString(relctl::formatDuration(60s)), QStringLiteral("1m"));
        QCOMPARE(QString::fromStdString(relctl::formatDuration(1500ms)), QStringLiteral("1500ms"));
        QCOMPARE(QString::fromStdString(relctl::formatDuration(2h)), QStringLiteral("2h"));
        QCOMPARE(QString::fromStdString(relctl::formatDuration(45s)), QStringLiteral("45s"));
    }
};

QTEST_GUILESS_MAIN(TestParse)
#include "test_parse.moc"
