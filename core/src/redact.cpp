#include "relctl/database.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

namespace relctl {

namespace {

constexpr std::string_view kMask = "***";

bool isSpace(char c)
{
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// %XX decoded where it is valid, kept as written where it is not: the
// password libpq would have used, and the one the user meant.
std::string percentDecoded(std::string_view text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const int high = text[i] == '%' && i + 2 < text.size() ? hexValue(text[i + 1]) : -1;
        const int low = high >= 0 ? hexValue(text[i + 2]) : -1;
        if (low >= 0) {
            out += static_cast<char>(high * 16 + low);
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

void addWritten(std::vector<std::string>& out, std::string_view value)
{
    if (value.empty())
        return;
    out.emplace_back(value);
    out.push_back(percentDecoded(value));
}

// A URI's passwords: user:PASSWORD@ and ?password=PASSWORD. libpq ends the
// user information at the first '@'; a user who wrote an '@' unencoded meant
// the last one before the host, so both are taken.
void uriPasswords(std::string_view uri, std::vector<std::string>& out)
{
    const std::size_t start = uri.find("://") + 3;
    const std::size_t query = uri.find('?', start);
    const std::size_t authorityEnd = std::min(uri.find('/', start), query);
    const std::string_view authority = uri.substr(start, authorityEnd - start);
    for (const std::size_t at : {authority.find('@'), authority.rfind('@')}) {
        if (at == std::string_view::npos)
            continue;
        const std::string_view userinfo = authority.substr(0, at);
        if (const std::size_t colon = userinfo.find(':'); colon != std::string_view::npos)
            addWritten(out, userinfo.substr(colon + 1));
    }
    if (query == std::string_view::npos)
        return;
    std::string_view rest = uri.substr(query + 1);
    while (!rest.empty()) {
        const std::size_t amp = rest.find('&');
        const std::string_view param = rest.substr(0, amp);
        const std::size_t eq = param.find('=');
        if (eq != std::string_view::npos && percentDecoded(param.substr(0, eq)) == "password")
            addWritten(out, param.substr(eq + 1));
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    }
}

// A value of the keyword/value form at text[i] (quoted with backslash
// escapes, or up to the next space): as written and as meant. Advances i.
std::pair<std::string, std::string> keywordValue(std::string_view text, std::size_t& i)
{
    const std::size_t begin = i;
    std::string meant;
    const bool quoted = i < text.size() && text[i] == '\'';
    if (quoted)
        ++i;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted ? c == '\'' : isSpace(c))
            break;
        if (c == '\\' && i + 1 < text.size())
            ++i;
        meant += text[i];
    }
    if (quoted && i < text.size())
        ++i; // the closing quote
    return {std::string(text.substr(begin, i - begin)), meant};
}

// The keyword/value form's password= values, read as libpq reads them, up to
// where the string stops making sense.
void keywordPasswords(std::string_view text, std::vector<std::string>& out)
{
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && isSpace(text[i]))
            ++i;
        const std::size_t keyStart = i;
        while (i < text.size() && text[i] != '=' && !isSpace(text[i]))
            ++i;
        const std::string_view keyword = text.substr(keyStart, i - keyStart);
        while (i < text.size() && isSpace(text[i]))
            ++i;
        if (i >= text.size() || text[i] != '=')
            return;
        ++i;
        while (i < text.size() && isSpace(text[i]))
            ++i;
        auto [written, meant] = keywordValue(text, i);
        if (keyword == "password") {
            if (!written.empty())
                out.push_back(std::move(written));
            if (!meant.empty())
                out.push_back(std::move(meant));
        }
    }
}

bool isWordChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// Every occurrence of secret in text masked. A password of fewer than four
// characters would mask pieces of ordinary words: it is masked only where it
// stands as a word of its own.
void maskAll(std::string& text, const std::string& secret)
{
    const bool wordOnly = secret.size() < 4;
    for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
        const std::size_t end = at + secret.size();
        if (wordOnly &&
            ((at > 0 && isWordChar(text[at - 1])) || (end < text.size() && isWordChar(text[end])))) {
            at = end;
            continue;
        }
        text.replace(at, secret.size(), kMask);
        at += kMask.size();
    }
}

// What looks like a password in text whatever the connection string was:
// password=VALUE (keyword/value) and scheme://user:PASSWORD@ (URI).
void maskForms(std::string& text)
{
    for (std::size_t at = text.find("password"); at != std::string::npos;
         at = text.find("password", at + 1)) {
        std::size_t i = at + 8;
        while (i < text.size() && text[i] == ' ')
            ++i;
        if (i >= text.size() || text[i] != '=')
            continue;
        ++i;
        while (i < text.size() && text[i] == ' ')
            ++i;
        const std::size_t valueStart = i;
        keywordValue(text, i);
        // A URI's query parameter ends at '&' (keywordValue reads to a space).
        const std::size_t amp = text.find('&', valueStart);
        const std::size_t valueEnd = text[valueStart] != '\'' && amp < i ? amp : i;
        if (valueEnd > valueStart)
            text.replace(valueStart, valueEnd - valueStart, kMask);
    }
    for (std::size_t at = text.find("://"); at != std::string::npos; at = text.find("://", at + 3)) {
        const std::size_t start = at + 3;
        std::size_t end = start;
        while (end < text.size() && text[end] != '/' && text[end] != '"' && text[end] != '?' &&
               !isSpace(text[end]))
            ++end;
        const std::size_t atSign = text.rfind('@', end == start ? start : end - 1);
        if (atSign == std::string::npos || atSign < start)
            continue;
        const std::size_t colon = text.find(':', start);
        if (colon < atSign && atSign - colon > 1)
            text.replace(colon + 1, atSign - colon - 1, kMask);
    }
}

} // namespace

std::string redactPasswords(const std::string& text, const std::string& conninfo)
{
    std::vector<std::string> passwords;
    const std::string_view dsn = conninfo;
    if (dsn.rfind("postgresql://", 0) == 0 || dsn.rfind("postgres://", 0) == 0)
        uriPasswords(dsn, passwords);
    else
        keywordPasswords(dsn, passwords);
    // The longest first: a password that contains another is masked whole.
    std::sort(passwords.begin(), passwords.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    std::string out = text;
    for (const std::string& p : passwords)
        if (!p.empty())
            maskAll(out, p);
    maskForms(out);
    return out;
}

} // namespace relctl
