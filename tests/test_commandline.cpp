// relctl's command line contract, without a database: the generated --help of
// every level exits 0 on stdout; each kind of bad usage exits 2 with exactly one
// "relctl: " line on stderr (and with --json one error object on stdout); the
// words after "--" belong to run's command untouched; global options come
// before the command. The binary runs against a DSN that cannot connect, so a
// command line that slipped through to the database would exit 9, not 0 or 2.

#define RELCTL_TEST_NO_SHORT_NAME // namespace relctl is used here too
#include "command.h"
#include "commandline.h"
#include "reference.h"
#include "relctl/catalogue.h"
#include "relctl/error.h"
#include "relctl/version.h"
#include "relctlprocess.h"

#include <QtTest>
#include <algorithm>
#include <functional>

namespace {

const std::string kDeadDsn = "host=/nonexistent-relctl-dir user=x connect_timeout=1";

QStringList toList(const Args& args)
{
    QStringList out;
    for (const std::string& a : args)
        out << QString::fromStdString(a);
    return out;
}

Args toArgs(const QStringList& list)
{
    Args out;
    for (const QString& w : list)
        out.push_back(w.toStdString());
    return out;
}

// The usage message parse() throws, or "" when it accepts the words.
std::string usageError(const Args& words)
{
    try {
        relctl::cli::CommandLine().parse(words);
        return std::string();
    } catch (const relctl::Error& e) {
        return e.code() == relctl::ExitCode::Usage ? std::string(e.what())
                                                   : "not a usage error: " + std::string(e.what());
    }
}

} // namespace

class TestCommandLine final : public QObject
{
    Q_OBJECT

private slots:
    // --help of the top level and of commands: exit 0, the text on stdout,
    // naming the command and each of its options.
    void help_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("usage");
        QTest::addColumn<QStringList>("names");
        QTest::addRow("relctl --help")
            << toList({"--help"}) << QStringLiteral("Usage: relctl [OPTIONS] SUBCOMMAND")
            << toList({"--dsn", "--json", "--job-url", "lease", "run", "audit", "Exit codes", "Durations"});
        QTest::addRow("relctl -h") << toList({"-h"}) << QStringLiteral("Usage: relctl [OPTIONS] SUBCOMMAND")
                                   << toList({"--dsn", "migrate", "approvals", "op"});
        QTest::addRow("with global options")
            << toList({"--json", "--dsn", "x", "--help"})
            << QStringLiteral("Usage: relctl [OPTIONS] SUBCOMMAND") << toList({"--job-url"});
        QTest::addRow("lease acquire --help") << toList({"lease", "acquire", "--help"})
                                              << QStringLiteral("Usage: relctl lease acquire [OPTIONS]")
                                              << toList({"--env", "--job", "--release", "--generation",
                                                         "--ttl", "--wait", "--op-id", "REQUIRED"});
        QTest::addRow("lease --help")
            << toList({"lease", "--help"}) << QStringLiteral("Usage: relctl lease [OPTIONS] SUBCOMMAND")
            << toList({"acquire", "renew", "release", "show", "revoke"});
        QTest::addRow("env add --help")
            << toList({"env", "add", "--help"}) << QStringLiteral("Usage: relctl env add [OPTIONS] NAME")
            << toList({"--default-ttl", "--max-ttl"});
        QTest::addRow("env set -h") << toList({"env", "set", "-h"})
                                    << QStringLiteral("Usage: relctl env set [OPTIONS] NAME")
                                    << toList(
                                           {"--policy", "ordered|newest", "--supersede", "--serialization"});
        QTest::addRow("run --help") << toList({"run", "--help"})
                                    << QStringLiteral("Usage: relctl run [OPTIONS]")
                                    << toList({"--env", "--generation", "--manifest", "--grace",
                                               "-- CMD [ARGS...]"});
        QTest::addRow("publish --help")
            << toList({"publish", "--help"}) << QStringLiteral("Usage: relctl publish [OPTIONS]")
            << toList({"--lease-file", "--manifest", "--op-id", "--env"});
        QTest::addRow("audit --help")
            << toList({"audit", "--help"}) << QStringLiteral("Usage: relctl audit [OPTIONS]")
            << toList({"--env", "--job", "--reason", "--operation", "--since", "--limit"});
        QTest::addRow("approve --help")
            << toList({"approve", "--help"}) << QStringLiteral("Usage: relctl approve [OPTIONS] ID")
            << toList({"--by", "--reason"});
        QTest::addRow("db --help") << toList({"db", "--help"})
                                   << QStringLiteral("Usage: relctl db [OPTIONS] SUBCOMMAND")
                                   << toList({"status", "start", "stop", "path"});
        // --help wins over what else is wrong on the line: it is asked for help.
        QTest::addRow("help despite missing options")
            << toList({"freeze", "--help"}) << QStringLiteral("Usage: relctl freeze [OPTIONS]")
            << toList({"--env", "--by", "--reason"});
    }

    void help()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, usage);
        QFETCH(QStringList, names);
        const RunResult r = relctlWithDsn(kDeadDsn, toArgs(args));
        QVERIFY2(r.exitCode == 0 && r.err.empty(), failure(r));
        QVERIFY2(r.out.find(usage.toStdString()) != std::string::npos, failure(r));
        for (const QString& name : names)
            QVERIFY2(r.out.find(name.toStdString()) != std::string::npos,
                     ("help does not name " + name.toStdString() + "\n" + r.out).c_str());
    }

    // --version: exit 0, one line naming the version project() declares and
    // the source revision this binary was built from, whatever follows it.
    void version()
    {
        const std::string expected =
            "relctl " + std::string(relctl::version()) + " (" + std::string(relctl::revision()) + ")\n";
        QVERIFY(std::string(relctl::version()).find('.') != std::string::npos);
        QVERIFY(!relctl::revision().empty());
        for (const Args& args :
             {Args{"--version"}, Args{"--dsn", "x", "--version"}, Args{"--version", "env", "list"}}) {
            const RunResult r = relctlWithDsn(kDeadDsn, args);
            QVERIFY2(r.exitCode == 0 && r.err.empty(), failure(r));
            QCOMPARE(r.out, expected);
        }
    }

    // The console answers --version and --help on a machine without a
    // display (a CI runner, an ssh session), where a QApplication cannot start.
    void consoleDescribesItselfWithoutADisplay()
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(QString::fromLatin1(name));
        const auto run = [&](const QString& word) {
            QProcess console;
            console.setProcessEnvironment(env);
            console.start(QStringLiteral(RELEASE_CONSOLE_BIN), {word});
            if (!console.waitForFinished(30000))
                console.kill();
            return std::make_tuple(console.exitCode(),
                                   QString::fromLocal8Bit(console.readAllStandardOutput()),
                                   QString::fromLocal8Bit(console.readAllStandardError()));
        };
        const auto [versionCode, versionOut, versionErr] = run(QStringLiteral("--version"));
        QVERIFY2(versionCode == 0, qPrintable(versionErr));
        QCOMPARE(versionOut, QStringLiteral("release-console %1 (%2)\n")
                                 .arg(QString::fromStdString(std::string(relctl::version())),
                                      QString::fromStdString(std::string(relctl::revision()))));
        const auto [helpCode, helpOut, helpErr] = run(QStringLiteral("--help"));
        QVERIFY2(helpCode == 0, qPrintable(helpErr));
        for (const char* word : {"Usage: ", "--dsn", "--demo", "--screenshot", "--version"})
            QVERIFY2(helpOut.contains(QString::fromLatin1(word)), qPrintable(helpOut));
        // Anything else needs a display: one line that says so (or what was
        // wrong with the options), exit 2, not Qt's abort.
        const auto [bogusCode, bogusOut, bogusErr] = run(QStringLiteral("--bogus"));
        QCOMPARE(bogusCode, 2);
        QVERIFY2(bogusErr.contains(QStringLiteral("Unknown option 'bogus'")), qPrintable(bogusErr));
        const auto [bareCode, bareOut, bareErr] = run(QStringLiteral("--demo"));
        QCOMPARE(bareCode, 2);
        QVERIFY2(bareErr.startsWith(QStringLiteral("release-console: no display")) &&
                     bareErr.count(QLatin1Char('\n')) == 1,
                 qPrintable(bareErr));
    }

    // The command reference in docs/ is what the grammar and the catalogue
    // say: regenerate it (relctl-docgen markdown docs/reference/commands.md)
    // when a command, an exit status or a variable changes.
    void theCommandReferenceIsTheGrammar()
    {
        QFile file(QStringLiteral(RELCTL_SOURCE_DIR "/docs/reference/commands.md"));
        QVERIFY2(file.open(QIODevice::ReadOnly), "docs/reference/commands.md is missing");
        const std::string checkedIn = file.readAll().toStdString();
        relctl::cli::CommandLine grammar;
        const std::string generated = relctl::cli::markdownReference(grammar.reference());
        QVERIFY2(checkedIn == generated,
                 "docs/reference/commands.md differs from the grammar: run "
                 "build/release/app/relctl-docgen markdown docs/reference/commands.md");
    }

    // One table holds every command's grammar and handler (command.h): every
    // command the parser builds is found there by its path, each leaf has a
    // handler and each group none, and no name repeats within a level. A
    // command added to the grammar without a handler fails here, not in a
    // user's hands as "no handler".
    void everyCommandOfTheGrammarHasItsHandler()
    {
        relctl::cli::CommandLine grammar;
        const relctl::cli::CommandReference root = grammar.reference();
        int leaves = 0;
        std::function<void(const relctl::cli::CommandReference&)> walk =
            [&](const relctl::cli::CommandReference& c) {
                QStringList names;
                for (const relctl::cli::CommandReference& sub : c.subcommands) {
                    const relctl::cli::Command* entry = relctl::cli::findCommand(sub.path);
                    QVERIFY2(entry != nullptr, sub.path.c_str());
                    QVERIFY2(entry->group() == !sub.subcommands.empty(), sub.path.c_str());
                    QVERIFY2((entry->run == nullptr) == entry->group(), sub.path.c_str());
                    QVERIFY2(entry->help == sub.help, sub.path.c_str());
                    names << QString::fromStdString(sub.path);
                    leaves += entry->group() ? 0 : 1;
                    walk(sub);
                }
                QCOMPARE(names.removeDuplicates(), 0);
            };
        walk(root);
        QCOMPARE(root.subcommands.size(), relctl::cli::commands().size());
        QVERIFY(leaves >= 30);
        QVERIFY(relctl::cli::findCommand("lease nothing") == nullptr);
        QVERIFY(relctl::cli::findCommand("lease") != nullptr && relctl::cli::findCommand("lease")->group());
    }

    // relctl(1), as the build generates it: every command, exit status and
    // variable is in it, and man renders it without a warning.
    void theManualPageNamesEverything()
    {
        QFile file(QStringLiteral(RELCTL_MANPAGE));
        QVERIFY2(file.open(QIODevice::ReadOnly), RELCTL_MANPAGE " was not generated");
        const std::string page = file.readAll().toStdString();
        relctl::cli::CommandLine grammar;
        const relctl::cli::CommandReference root = grammar.reference();
        std::vector<std::string> paths;
        std::function<void(const relctl::cli::CommandReference&)> collect = [&](const auto& c) {
            if (!c.path.empty())
                paths.push_back(c.path);
            for (const auto& sub : c.subcommands)
                collect(sub);
        };
        collect(root);
        QVERIFY(paths.size() > 40);
        for (const std::string& path : paths)
            QVERIFY2(page.find(".SS \"relctl " + path) != std::string::npos, path.c_str());
        for (const auto& s : relctl::catalogue::kExitStatuses)
            QVERIFY2(page.find(".B " + std::to_string(static_cast<int>(s.code)) + "\n" + std::string(s.name) +
                               ":") != std::string::npos,
                     std::string(s.name).c_str());
        for (const auto& v : relctl::catalogue::kVariables)
            QVERIFY2(page.find(".B " + std::string(v.name) + "\n") != std::string::npos,
                     std::string(v.name).c_str());
        QVERIFY(page.find("QUEUE_FULL") != std::string::npos);

        QProcess man;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("MANWIDTH"), QStringLiteral("80"));
        man.setProcessEnvironment(env);
        man.start(QStringLiteral("man"),
                  {QStringLiteral("--warnings"), QStringLiteral("-E"), QStringLiteral("UTF-8"),
                   QStringLiteral("-l"), QStringLiteral(RELCTL_MANPAGE)});
        QVERIFY(man.waitForFinished(30000));
        const QString rendered = QString::fromUtf8(man.readAllStandardOutput());
        const QString warnings = QString::fromUtf8(man.readAllStandardError());
        QCOMPARE(man.exitCode(), 0);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings));
        QVERIFY2(rendered.contains(QStringLiteral("relctl lease acquire --env E --job J")),
                 qPrintable(rendered.left(2000)));
        QVERIFY(rendered.contains(QStringLiteral("EXIT STATUS")));
    }

    // The completion script, as the build generates it and as `relctl
    // completion bash` prints it, completes commands, subcommands and
    // options in bash.
    void bashCompletesFromTheGrammar()
    {
        const RunResult printed = relctlWithDsn(kDeadDsn, {"completion", "bash"});
        QVERIFY2(printed.exitCode == 0, failure(printed));
        QFile file(QStringLiteral(RELCTL_BASH_COMPLETION));
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(printed.out, file.readAll().toStdString());
        const auto complete = [](const QString& words) {
            QProcess bash;
            bash.start(QStringLiteral("bash"),
                       {QStringLiteral("-c"),
                        QStringLiteral("source '%1'; COMP_WORDS=(%2); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
                                       "_relctl; echo \"${COMPREPLY[*]}\"")
                            .arg(QStringLiteral(RELCTL_BASH_COMPLETION), words)});
            bash.waitForFinished(10000);
            return QString::fromUtf8(bash.readAllStandardOutput()).trimmed();
        };
        QCOMPARE(complete(QStringLiteral("relctl lease a")), QStringLiteral("acquire"));
        QCOMPARE(complete(QStringLiteral("relctl --json lease acquire --gen")),
                 QStringLiteral("--generation"));
        QCOMPARE(complete(QStringLiteral("relctl prom")), QStringLiteral("promote"));
        QCOMPARE(complete(QStringLiteral("relctl --ver")), QStringLiteral("--version"));
        QCOMPARE(complete(QStringLiteral("relctl lease acquire --env ''")),
                 QString()); // a value: nothing to offer
        QCOMPARE(relctlWithDsn(kDeadDsn, {"completion", "fish"}).exitCode, 2);
    }

    // Each kind of bad usage: exit 2, one "relctl: " line on stderr holding the
    // message, nothing on stdout; with a leading --json the same message as one
    // error object on stdout.
    void badUsage_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        const auto row = [](const char* name, const Args& args, const char* message) {
            QTest::newRow(name) << toList(args) << QString::fromUtf8(message);
        };
        const Args acquire{"lease", "acquire", "--env", "prod", "--job", "j", "--release", "r"};
        const auto with = [](Args head, const Args& tail) {
            head.insert(head.end(), tail.begin(), tail.end());
            return head;
        };
        row("no command", {}, "missing a command (see relctl --help)");
        row("unknown command", {"frobnicate"}, "unknown command \"frobnicate\" (see relctl --help)");
        row("missing subcommand", {"lease"},
            "missing a subcommand of 'lease' (acquire, renew, release, show, revoke)");
        row("unknown subcommand", {"lease", "steal"}, "unknown subcommand 'lease steal'");
        row("unknown option", with(acquire, {"--generation", "1", "--force"}),
            "unknown option --force for 'lease acquire'");
        row("unknown option with a value", {"audit", "--tail=5"}, "unknown option --tail for 'audit'");
        row("unknown global option", {"--frobnicate", "env", "list"},
            "unknown global option --frobnicate (global options come before the command)");
        row("missing required option", acquire, "'lease acquire' needs --generation");
        row("missing positional", {"env", "add"}, "'env add' needs an environment name");
        row("missing value", {"env", "add", "qa", "--max-ttl"}, "option --max-ttl needs a value");
        row("missing value of a global option", {"--dsn"}, "option --dsn needs a value");
        row("invalid duration", {"env", "add", "qa", "--default-ttl", "1.5s"},
            "--default-ttl: invalid duration \"1.5s\"");
        row("duration not positive", with(acquire, {"--generation", "1", "--ttl", "0"}),
            "--ttl: must be positive, not \"0\"");
        row("invalid positive integer", with(acquire, {"--generation", "0"}),
            "--generation: invalid value \"0\": expected a positive 64-bit integer");
        row("invalid environment name", {"lease", "show", "--env", "Prod"},
            "--env: invalid environment name \"Prod\"");
        row("invalid positional", {"env", "show", "PROD"}, "invalid environment name \"PROD\"");
        row("invalid enumeration", {"env", "set", "prod", "--policy", "fifo"},
            "--policy: invalid value \"fifo\": expected ordered or newest");
        row("empty value", {"trace", "--job", ""}, "--job: may not be empty");
        row("empty value with =", {"trace", "--job="}, "--job: may not be empty");
        row("extra positional", {"env", "show", "prod", "staging"},
            "unexpected argument \"staging\" for 'env show'");
        row("option given twice", {"env", "add", "qa", "--max-ttl", "1m", "--max-ttl=2m"},
            "option --max-ttl given twice");
        row("flag given twice", {"manifest", "show", "--env", "prod", "--history", "--history"},
            "option --history given twice");
        row("flag given a value", {"manifest", "show", "--env", "prod", "--history=yes"},
            "option --history takes no value");
        row("flag given true", {"migrate", "--status=true"}, "option --status takes no value");
        row("global flag given a value", {"--json=false", "env", "list"}, "option --json takes no value");
        row("global option after the command", {"env", "list", "--json"},
            "unknown option --json for 'env list'");
        row("--dsn after the command", {"lease", "show", "--env", "prod", "--dsn", "x"},
            "unknown option --dsn for 'lease show'");
        row("-- for a command other than run", {"env", "list", "--", "x"},
            "unexpected argument \"--\" for 'env list'");
        row("run without --",
            {"run", "--env", "prod", "--job", "j", "--release", "r", "--generation", "1", "./deploy.sh"},
            "'run' needs -- before the command");
        row("run without a command",
            {"run", "--env", "prod", "--job", "j", "--release", "r", "--generation", "1", "--"},
            "'run' needs a command after --");
        row("run option after --",
            {"run", "--env", "prod", "--job", "j", "--release", "r", "--", "cmd", "--generation", "1"},
            "'run' needs --generation");
    }

    void badUsage()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        for (bool json : {false, true}) {
            Args words = toArgs(args);
            if (json)
                words.insert(words.begin(), "--json");
            const RunResult r = relctlWithDsn(kDeadDsn, words);
            QVERIFY2(r.exitCode == 2, failure(r));
            QVERIFY2(r.err.rfind("relctl: ", 0) == 0 && r.err.back() == '\n' &&
                         std::count(r.err.begin(), r.err.end(), '\n') == 1,
                     ("stderr is not one \"relctl: \" line\n" + r.describe()).c_str());
            QVERIFY2(r.err.find(message.toStdString()) != std::string::npos,
                     ("expected \"" + message.toStdString() + "\"\n" + r.describe()).c_str());
            if (!json) {
                QVERIFY2(r.out.empty(), failure(r));
                continue;
            }
            const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
            QVERIFY2(j.is_object() && j.value("error", "") == "usage" &&
                         "relctl: " + j.value("message", "") + "\n" == r.err,
                     failure(r));
        }
    }

    // Everything after the first "--" is the command of run, untouched, even
    // words that look like relctl's own options.
    void runCommandIsUntouched()
    {
        const Args words{"--job-url", "u",      "run",          "--env", "prod",   "--job",       "j",
                         "--release", "r",      "--generation", "7",     "--",     "./deploy.sh", "--dsn",
                         "x",         "--json", "--help",       "--",    "--env=y"};
        const relctl::cli::Invocation i = relctl::cli::CommandLine().parse(words);
        QVERIFY(!i.help);
        QVERIFY(i.childCommand.has_value());
        QCOMPARE(toList(*i.childCommand),
                 toList({"./deploy.sh", "--dsn", "x", "--json", "--help", "--", "--env=y"}));
        QVERIFY(!i.globals.dsn);
        QVERIFY(!i.globals.json);
        QCOMPARE(i.globals.jobUrl, std::string("u"));
        QCOMPARE(i.arguments.command(), std::string("run"));
        QCOMPARE(i.arguments.get("env").value_or("?"), std::string("prod"));
        QCOMPARE(i.arguments.requiredPositiveInt("generation"), std::int64_t(7));
    }

    // Global options before the command, in any order; a repeated one keeps
    // its last value, as it always did.
    void globalOptions()
    {
        const relctl::cli::Invocation i = relctl::cli::CommandLine().parse(
            {"--dsn", "host=a", "--json", "--job-url", "https://ci/1", "--dsn=host=b", "env", "list"});
        QCOMPARE(i.globals.dsn.value_or("?"), std::string("host=b"));
        QVERIFY(i.globals.json);
        QCOMPARE(i.globals.jobUrl, std::string("https://ci/1"));
        QCOMPARE(i.arguments.command(), std::string("env list"));
        QVERIFY(!i.childCommand);
        const relctl::cli::Invocation none = relctl::cli::CommandLine().parse({"env", "list"});
        QVERIFY(!none.globals.dsn && !none.globals.json && none.globals.jobUrl.empty());
    }

    // "--name=VALUE" and "--name VALUE" mean the same; a value is the next
    // word whatever it looks like ("-" for stdin, a leading dash); "--name="
    // is an empty value.
    void optionValues()
    {
        const auto parse = [](const Args& words) {
            return relctl::cli::CommandLine().parse(words).arguments;
        };
        const auto spaced = parse({"approve", "12", "--by", "alice", "--reason", "-x"});
        const auto joined = parse({"approve", "--by=alice", "--reason=-x", "12"});
        for (const auto* a : {&spaced, &joined}) {
            QCOMPARE(a->command(), std::string("approve"));
            QCOMPARE(a->positional(0, "id"), std::string("12"));
            QCOMPARE(a->get("by").value_or("?"), std::string("alice"));
            QCOMPARE(a->get("reason").value_or("?"), std::string("-x"));
        }
        QCOMPARE(parse({"publish", "--manifest", "-"}).get("manifest").value_or("?"), std::string("-"));
        QCOMPARE(parse({"publish", "--manifest", "--op-id"}).get("manifest").value_or("?"),
                 std::string("--op-id"));
        QCOMPARE(parse({"audit", "--job="}).get("job").value_or("?"), std::string());
        // No list syntax: a value is one word, brackets and commas included.
        QCOMPARE(parse({"audit", "--job", "[a,b]"}).get("job").value_or("?"), std::string("[a,b]"));
        QCOMPARE(parse({"audit", "--reason=a,b"}).get("reason").value_or("?"), std::string("a,b"));
        // An environment may be called like a command.
        QCOMPARE(parse({"env", "show", "lease"}).positional(0, "name"), std::string("lease"));
        const auto flags = parse({"approvals", "list", "--all"});
        QVERIFY(flags.has("all"));
        QVERIFY(!flags.has("env"));
        QCOMPARE(parse({"db", "status"}).command(), std::string("db status"));
        const auto prune =
            parse({"state", "prune", "--older-than", "48h", "--max-files", "500", "--dry-run"});
        QCOMPARE(prune.command(), std::string("state prune"));
        QCOMPARE(prune.get("older-than").value_or("?"), std::string("48h"));
        QCOMPARE(prune.get("max-files").value_or("?"), std::string("500"));
        QVERIFY(prune.has("dry-run"));
    }

    // The same checks through the function, for the kinds the binary rows
    // above do not spell out: each is a usage error naming the culprit.
    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::addRow("state needs a subcommand")
            << toList({"state"}) << QStringLiteral("missing a subcommand of 'state' (show, prune)");
        QTest::addRow("state show takes no option")
            << toList({"state", "show", "--older-than", "2h"})
            << QStringLiteral("unknown option --older-than for 'state show'");
        QTest::addRow("dry-run takes no value") << toList({"state", "prune", "--dry-run=yes"})
                                                << QStringLiteral("option --dry-run takes no value");
        QTest::addRow("deny needs a reason")
            << toList({"deny", "3", "--by", "bob"}) << QStringLiteral("'deny' needs --reason");
        QTest::addRow("unfreeze reason needs a value")
            << toList({"unfreeze", "--env", "p", "--by", "a", "--reason"})
            << QStringLiteral("option --reason needs a value");
        QTest::addRow("short option")
            << toList({"env", "add", "-x"}) << QStringLiteral("unknown option -x for 'env add'");
        QTest::addRow("subcommand word after a full command")
            << toList({"env", "show", "prod", "list"}) << QStringLiteral("unexpected argument \"list\"");
        QTest::addRow("db stray argument") << toList({"db", "status", "now"})
                                           << QStringLiteral("unexpected argument \"now\" for 'db status'");
        QTest::addRow("approve id not a number")
            << toList({"approve", "first", "--by", "alice"}) << QStringLiteral("invalid value \"first\"");
        QTest::addRow("negative wait") << toList({"lease", "acquire", "--env", "p", "--job", "j", "--release",
                                                  "r", "--generation", "1", "--wait", "-1s"})
                                       << QStringLiteral("--wait: invalid duration \"-1s\"");
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const std::string e = usageError(toArgs(args));
        QVERIFY2(e.find(message.toStdString()) != std::string::npos, e.c_str());
        QVERIFY2(e.find('\n') == std::string::npos, e.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "test_commandline.moc"
