// Uses relctl::client from an installed package: the compiled-in schema, the
// installed schema source next to it, and the parsing helpers.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <relctl/migrations.h>
#include <relctl/parse.h>

int main()
{
    int failures = 0;
    const auto check = [&failures](bool ok, const char* what) {
        if (!ok) {
            std::cerr << "FAIL: " << what << '\n';
            ++failures;
        }
    };

    const auto& migrations = relctl::bundledMigrations();
    check(!migrations.empty(), "the library carries its migrations");
    check(!relctl::bundledModules().empty(), "the library carries its function modules");

    // share/relctl/migrations holds the same numbered files the library carries.
    std::size_t installed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(RELCTL_MIGRATIONS_DIR)) {
        if (entry.is_regular_file() && entry.path().extension() == ".sql") {
            ++installed;
        }
    }
    check(installed == migrations.size(), "installed migrations match the compiled-in ones");
    check(std::filesystem::is_directory(std::filesystem::path(RELCTL_MIGRATIONS_DIR) / "functions"),
          "installed function modules");

    check(relctl::parseDuration("90s") == std::chrono::milliseconds(90'000), "parseDuration(\"90s\")");
    check(!relctl::parseDuration("-1s"), "parseDuration(\"-1s\") is refused");

    std::cout << migrations.size() << " migrations, " << relctl::bundledModules().size()
              << " function modules, " << installed << " installed migration files\n";
    return failures == 0 ? 0 : 1;
}
