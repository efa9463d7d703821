# frozen_string_literal: true

# Writes the Makefile that builds the Rust extension with cargo. RubyGems and
# rake-compiler both drive it through mkmf's usual targets (all, install,
# clean). It needs nothing beyond Ruby's standard library: no rb_sys gem.
require "mkmf"
require "shellwords"

crate = "window_machines"
workspace_manifest = File.expand_path("../../Cargo.toml", __dir__)
cargo_library =
  if RbConfig::CONFIG["host_os"].match?(/mswin|mingw/)
    "#{crate}.dll"
  else
    "lib#{crate}.#{RbConfig::CONFIG['SOEXT']}"
  end

File.write("Makefile", <<~MAKEFILE)
  SHELL = /bin/sh
  CARGO ?= cargo
  RUBY = #{RbConfig.ruby.shellescape}
  DLEXT = #{RbConfig::CONFIG['DLEXT']}
  TARGET_SO = #{crate}.$(DLEXT)
  sitearchdir = #{RbConfig::CONFIG['sitearchdir'].shellescape}
  target_prefix = /#{crate}
  RUBYARCHDIR = $(sitearchdir)$(target_prefix)

  # A target directory of our own (a gem install) is removed after install,
  # with the built library, so an installed gem keeps no build output; one
  # given from outside (rake compile) is left alone.
  OWN_TARGET_DIR = $(CURDIR)/target
  CARGO_TARGET_DIR ?= $(OWN_TARGET_DIR)

  all: $(TARGET_SO)

  $(TARGET_SO): FORCE
  \tenv RUBY=$(RUBY) CARGO_TARGET_DIR="$(CARGO_TARGET_DIR)" $(CARGO) build --release --locked \\
  \t  --manifest-path #{workspace_manifest.shellescape} --package #{crate}
  \tcp "$(CARGO_TARGET_DIR)/release/#{cargo_library}" $(TARGET_SO)

  # Copied beside the target, then renamed over it: a process that has the
  # old library loaded keeps its mapping instead of crashing.
  install: $(TARGET_SO)
  \tmkdir -p "$(DESTDIR)$(RUBYARCHDIR)"
  \tcp $(TARGET_SO) "$(DESTDIR)$(RUBYARCHDIR)/$(TARGET_SO).new"
  \tmv -f "$(DESTDIR)$(RUBYARCHDIR)/$(TARGET_SO).new" "$(DESTDIR)$(RUBYARCHDIR)/$(TARGET_SO)"
  \tif [ "$(CARGO_TARGET_DIR)" = "$(OWN_TARGET_DIR)" ]; then rm -rf "$(OWN_TARGET_DIR)" $(TARGET_SO); fi

  clean:
  \trm -f $(TARGET_SO)

  distclean: clean
  \trm -rf "$(OWN_TARGET_DIR)" Makefile

  FORCE:

  .PHONY: all install clean distclean FORCE
MAKEFILE
