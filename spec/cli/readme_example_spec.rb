# frozen_string_literal: true

# README › From the shell sessionizes the bundled signups file and prints the
# table it writes to a terminal; this keeps the command and the printed rows
# true to each other.
RSpec.describe "window_machines README example" do
  include WindowMachinesSpec::Command

  readme = File.read(File.join(WindowMachinesSpec::Command::ROOT, "README.md"))
  section = readme[/^## From the shell\n.*?(?=^## )/m]
  command = section[/exe\/window_machines sessions \\\n(.*?) examples\/signups\.csv/m, 1].split
  shown = section[/^```\n(source  first.*?)^```/m, 1].lines.reject { |line| line.start_with?("...") }

  it "prints the rows the README shows, in that order" do
    result = run_cli("sessions", *command, "--output-format", "table", "examples/signups.csv")
    expect(result).to be_success, result.describe
    expect(result.stdout.lines.first(shown.size)).to eq(shown)
    expect(result.stdout.lines.size).to eq(13)
  end
end
