"""A faulty bot for check-bot's tests: it crashes before it connects, with a Python traceback
longer than the lines check-bot quotes (its first line and its message must both be quoted)."""

print("faulty bot: reading the configuration", flush=True)


def read_config():
    return parse_section("seat")


def parse_section(name):
    return parse_key(name, "token")


def parse_key(section, key):
    return lookup(section, key)


def lookup(section, key):
    return resolve(section + "." + key)


def resolve(path):
    return expand(path)


def expand(path):
    return fail(path)


def fail(path):
    raise ValueError(f"no value for {path} in bot.toml (deliberate fault)")


read_config()
