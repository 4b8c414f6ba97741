"""The catalog page (/ui) in a real headless Chromium, driven by Selenium (issue #17).

Usage: ui_browser.py BASE SCREENSHOT_DIR                 (a server with the bundled catalog)
       ui_browser.py --auth BASE PLAIN_KEY LOOKUP_KEY     (a server whose `lookup` tools need a
                                                          scope only LOOKUP_KEY has)
       ui_browser.py --agents BASE SCREENSHOT_DIR         (the bundled catalog with the example
                                                          agents of examples/agents, issue #33)
       ui_browser.py --h2 HTTPS_BASE PROFILE_DIR          (the bundled catalog over https with a
                                                          self-signed certificate: HTTP/2 by ALPN,
                                                          issue #37.1)
Prints one line per check and a closing "N passed, M failed" line; exits 1 on any failure.
"""

import sys
import time

from checks import check, finish
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,1000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait(driver, condition, timeout=10):
    # An element read while the page navigates or re-renders goes stale: read it again.
    return WebDriverWait(driver, timeout, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: condition(d)
    )


def rows(driver):
    try:
        return [a.text for a in driver.find_elements(By.CSS_SELECTOR, "#rows td a")]
    except StaleElementReferenceException:  # re-rendered while read: read again
        return []


def catalog(base, shots):
    driver = browser()
    try:
        driver.get(f"{base}/ui/")
        count = wait(driver, lambda d: d.find_element(By.ID, "count").text)
        check("the page loads with the tool count", "6 tools in 4 toolkits" in count, count)
        wait(driver, lambda d: len(rows(d)) == 6)

        search = driver.find_element(By.ID, "search")
        search.send_keys("length")
        driver.find_element(By.CSS_SELECTOR, "form.filters button[type=submit]").click()
        wait(driver, lambda d: rows(d) == ["convert_length"])
        check("search by description", rows(driver) == ["convert_length"], rows(driver))

        search.clear()
        Select(driver.find_element(By.ID, "tag")).select_by_value("math")
        wait(driver, lambda d: "add_numbers" in rows(d) and "convert_length" in rows(d) and "lookup_country_by_code" not in rows(d))
        check("filter by tag", "add_numbers" in rows(driver) and "count_words_in_text" not in rows(driver), rows(driver))
        Select(driver.find_element(By.ID, "toolkit")).select_by_value("Text")
        wait(driver, lambda d: sorted(rows(d)) == ["convert_text_case", "count_words_in_text"])
        check("filter by toolkit", sorted(rows(driver)) == ["convert_text_case", "count_words_in_text"], rows(driver))
        Select(driver.find_element(By.ID, "toolkit")).select_by_value("")
        wait(driver, lambda d: len(rows(d)) == 6)
        driver.save_screenshot(f"{shots}/ui-catalog.png")

        # Export a selection as OpenAI tools, and as a lockfile.
        driver.find_element(By.ID, "select-add_numbers").click()
        driver.find_element(By.ID, "export-openai").click()
        exported = wait(driver, lambda d: d.find_element(By.ID, "export-output").text)
        check("export the selection as OpenAI tools", '"type": "function"' in exported and "add_numbers" in exported, exported[:200])
        driver.find_element(By.ID, "export-lock").click()
        wait(driver, lambda d: "lockfile" in d.find_element(By.ID, "export-output").text)
        check("and as a lockfile", '"signature": "sha256:' in driver.find_element(By.ID, "export-output").text)

        # A tool: its page, a diff of two versions, the try-it form.
        driver.find_element(By.LINK_TEXT, "convert_length").click()
        wait(driver, lambda d: "convert_length" in d.find_element(By.TAG_NAME, "h2").text)
        page = driver.find_element(By.ID, "view").text
        check("the tool page shows inputs, enum values and outputs", "MILLIMETRE" in page and "Outputs" in page and "unit" in page, page[:300])
        Select(driver.find_element(By.ID, "diff-from")).select_by_value("1")
        Select(driver.find_element(By.ID, "diff-to")).select_by_value("3")
        driver.find_element(By.ID, "compare").click()
        diff = wait(driver, lambda d: d.find_element(By.ID, "diff").text)
        check("a diff of 1.0.0 and 1.2.0 by check's rules", "compatible" in diff and "YARD" in diff, diff)
        Select(driver.find_element(By.ID, "pin-version")).select_by_value("1")
        driver.find_element(By.ID, "pin").click()
        check("a chosen version goes into the selection", "convert_length@1.0.0" in driver.find_element(By.ID, "pinned").text)
        connect = driver.find_element(By.XPATH, "//h3[text()='Connect']/..").text
        check("how each protocol reaches it", all(p in connect for p in ("N-ACT", "OTC", "WoA", "MCP")), connect)
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(f"{shots}/ui-tool.png")

        value = driver.find_element(By.ID, "input-value")
        value.send_keys("far")
        Select(driver.find_element(By.ID, "input-from")).select_by_value("METRE")
        Select(driver.find_element(By.ID, "input-to")).select_by_value("KILOMETRE")
        driver.find_element(By.ID, "try-submit").click()
        error = wait(driver, lambda d: d.find_element(By.ID, "input-value-error").text)
        check("a bad value shows the server's error at its field", "value" in error, error)
        value.clear()
        value.send_keys("1500")
        driver.find_element(By.ID, "try-submit").click()
        result = wait(driver, lambda d: d.find_element(By.ID, "try-result").text if "Result" in d.find_element(By.ID, "try-result").text else None)
        check("a good one shows the result and the duration", "1.5" in result and " ms" in result, result)
        driver.execute_script("document.getElementById('try-result').scrollIntoView({block: 'end'})")
        driver.save_screenshot(f"{shots}/ui-try.png")

        driver.find_element(By.LINK_TEXT, "← All tools").click()
        wait(driver, lambda d: len(rows(d)) == 6)
        driver.find_element(By.ID, "export-lock").click()
        lock = wait(driver, lambda d: d.find_element(By.ID, "export-output").text if "convert_length" in d.find_element(By.ID, "export-output").text else None)
        check("the lockfile pins the chosen version", '"version": "1.0.0"' in lock and '"version_number": 1' in lock, lock[:400])
        origins = driver.execute_script("return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
        check("no request leaves this server", all(o == base for o in origins), origins)
        driver.set_window_size(400, 900)
        time.sleep(0.3)
        wide = driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
        check("readable on a narrow window (no sideways scrolling)", wide)
        labels = driver.execute_script(
            "return [...document.querySelectorAll('input:not([type=checkbox]), select')].every(i => i.labels && i.labels.length > 0)"
        )
        check("every field has a label", labels)
    finally:
        driver.quit()


def authenticated(base, plain, lookup):
    driver = browser()
    try:
        driver.get(f"{base}/ui/")
        message = wait(driver, lambda d: d.find_element(By.ID, "view").text)
        check("without credentials the page says what to do", "Credentials" in message, message)
        for key, sees in ((plain, False), (lookup, True)):
            driver.find_element(By.TAG_NAME, "summary").click()
            driver.find_element(By.ID, "credential").send_keys(key)
            driver.find_element(By.CSS_SELECTOR, "#credentials-form button[type=submit]").click()
            try:
                wait(driver, lambda d: len(rows(d)) >= 5 and ("lookup_country_by_code" in rows(d)) == sees)
            except TimeoutException:
                pass
            listed = rows(driver)
            check(f"a caller {'with' if sees else 'without'} the scope {'sees' if sees else 'does not see'} the hidden tool", ("lookup_country_by_code" in listed) == sees, listed)
            driver.find_element(By.TAG_NAME, "summary").click()
    finally:
        driver.quit()


def agents(base, shots):
    driver = browser()
    try:
        driver.get(f"{base}/ui/#/agents")
        count = wait(driver, lambda d: d.find_element(By.ID, "agent-count").text)
        check("the Agents view lists the agents", count == "2 agents", count)
        listed = driver.find_element(By.ID, "agent-rows").text
        check("with each one's tools and versions, the pin marked", "convert_length@1.0.0 (pinned)" in listed and "convert_length@1.2.0" in listed, listed)
        driver.find_element(By.LINK_TEXT, "travel").click()
        wait(driver, lambda d: d.find_element(By.TAG_NAME, "h2").text == "travel")
        procedure = wait(driver, lambda d: d.find_element(By.ID, "procedure"))
        headings = [h.text for h in procedure.find_elements(By.CSS_SELECTOR, "h3, h4, h5")]
        check("the procedure is rendered: its headings", headings[:2] == ["Goal", "Countries"], headings)
        calls = [c.text for c in procedure.find_elements(By.CSS_SELECTOR, "a code.call")]
        check("and its tool calls, linked to the tools", "convert_length()" in calls and "lookup_country_by_code()" in calls, calls)
        tools = driver.find_element(By.ID, "agent-tools").text
        check("its tools with their versions and how the procedure uses them", "1.0.0 (pinned)" in tools and "use convert_length() with the units" in tools, tools)
        findings = driver.find_element(By.ID, "findings").text
        check("the check's findings", "nothing to change" in findings, findings)
        endpoints = driver.find_element(By.ID, "agent-endpoints").text
        check("its endpoints per protocol", f"{base}/agents/travel/mcp" in endpoints and f"{base}/agents/travel/nact" in endpoints, endpoints)
        driver.save_screenshot(f"{shots}/ui-agent.png")

        # A new agent from tools selected on the page, at their versions.
        driver.get(f"{base}/ui/#/")
        wait(driver, lambda d: len(rows(d)) == 6)
        driver.find_element(By.ID, "select-add_numbers").click()
        driver.find_element(By.LINK_TEXT, "convert_length").click()
        wait(driver, lambda d: "convert_length" in d.find_element(By.TAG_NAME, "h2").text)
        Select(driver.find_element(By.ID, "pin-version")).select_by_value("1")
        driver.find_element(By.ID, "pin").click()
        driver.find_element(By.ID, "nav-agents").click()
        wait(driver, lambda d: d.find_element(By.ID, "agent-count").text)
        selection = driver.find_element(By.ID, "agent-selection").text
        check("the new agent starts from the selection", "add_numbers@1.0.0" in selection and "convert_length@1.0.0" in selection, selection)
        driver.find_element(By.ID, "agent-name").send_keys("Bad Name")
        driver.find_element(By.ID, "agent-description").send_keys("Sums and lengths.")
        driver.find_element(By.ID, "agent-build").click()
        refused = wait(driver, lambda d: d.find_element(By.ID, "agent-file").text)
        check("a name that is not allowed is refused, saying why", "is not allowed" in refused, refused)
        name = driver.find_element(By.ID, "agent-name")
        name.clear()
        name.send_keys("sums")
        driver.find_element(By.ID, "agent-build").click()
        file = wait(driver, lambda d: d.find_element(By.ID, "agent-file").text if d.find_element(By.ID, "agent-file").text.startswith("---") else None)
        check("the agent file selects the tools at their versions", "name: sums" in file and "  - add_numbers@1.0.0" in file and "  - convert_length@1.0.0" in file, file)
        check("and its procedure calls each of them", "add_numbers()" in file and "convert_length()" in file, file)
        link = driver.find_element(By.ID, "agent-download")
        check("it is offered as a download", link.get_attribute("download") == "sums.md" and link.get_attribute("href").startswith("blob:"), link.get_attribute("outerHTML"))
        origins = driver.execute_script("return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
        check("no request leaves this server", all(o == base for o in origins), origins)
    finally:
        driver.quit()


def over_h2(base, profile):
    """The page over https, as a locked-down headless Chromium opens it with a fresh profile
    (no QUIC, so HTTP/2 by ALPN is what it can use): it renders, and the page and every request
    it made came over h2."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--ignore-certificate-errors", f"--user-data-dir={profile}", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.get(f"{base}/ui/")
        try:
            count = wait(driver, lambda d: d.find_element(By.ID, "count").text)
        except TimeoutException:
            count = f"nothing rendered: {driver.title!r} {driver.page_source[:300]!r}"
        check("the page loads over https", "6 tools in 4 toolkits" in count, count)
        if "6 tools" not in count:
            return
        wait(driver, lambda d: len(rows(d)) == 6)
        check("and lists the tools", len(rows(driver)) == 6, rows(driver))
        navigation = driver.execute_script("return performance.getEntriesByType('navigation')[0].nextHopProtocol")
        check("the page came over HTTP/2", navigation == "h2", navigation)
        fetched = driver.execute_script("return performance.getEntriesByType('resource').map(e => [e.name, e.nextHopProtocol])")
        check("and so did every request it made", fetched and all(p == "h2" for _, p in fetched), fetched)
    finally:
        driver.quit()


if __name__ == "__main__":
    if sys.argv[1] == "--auth":
        authenticated(*sys.argv[2:5])
    elif sys.argv[1] == "--agents":
        agents(*sys.argv[2:4])
    elif sys.argv[1] == "--h2":
        over_h2(*sys.argv[2:4])
    else:
        catalog(sys.argv[1], sys.argv[2])
    finish()
