# What the report's browser and format tests need (tests/cases/render_*.sh):
#   BROWSER_DEB_PKGS  Debian packages: Chromium (headless, /usr/bin/chromium), fonts for its
#                     screenshots, and Node.js and npm where the machine has none of its own
#   browser-deps      the npm packages of tests/browser/package.json, exactly as its
#                     package-lock.json pins them, into tests/browser/node_modules

BROWSER_DIR      := tests/browser
BROWSER_DEB_PKGS := chromium fonts-dejavu-core \
		    $(if $(shell command -v node 2>/dev/null),,nodejs) \
		    $(if $(shell command -v npm 2>/dev/null),,npm)

# npm ci leaves node_modules/.package-lock.json: the stamp that the lock file was installed.
$(BROWSER_DIR)/node_modules/.package-lock.json: $(BROWSER_DIR)/package.json \
						 $(BROWSER_DIR)/package-lock.json
	$(call msg,NPM,$(BROWSER_DIR))
	$(Q)cd $(BROWSER_DIR) && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund \
		--loglevel=error >/dev/null
	$(Q)touch $@

.PHONY: browser-deps
browser-deps: $(BROWSER_DIR)/node_modules/.package-lock.json
