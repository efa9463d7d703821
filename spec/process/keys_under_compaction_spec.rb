# frozen_string_literal: true

# Keys that the garbage collector moves while a tracker is restored, copied
# or looked up. Each scenario runs in a child Ruby (see
# spec/support/fixture_process.rb): under GC.stress it is fast only in a
# small process, and a tracker that loses track of a moved key can abort
# Ruby with "[BUG] try to mark T_NONE object", which must fail the example,
# not end the suite.
RSpec.describe "WindowMachines::KeyedSessions keys under GC compaction" do
  include WindowMachinesSpec::FixtureProcess

  def expected_triples(count, &key) = Array.new(count) { |n| [key.call(n), n * 10, n * 10] }

  it "restores String keys under GC.stress and auto-compaction, each under its own name" do
    results = run_fixture("keys_restore_under_gc_stress.rb")
    expected = expected_triples(100) { |n| "key-#{n}" }
    expect(results[:first_key]).to eq([[0, 0]])
    expect(results[:from_h]).to eq(expected)
    expect(results[:marshal]).to eq(expected)
    expect(results[:missing]).to eq([])
  end

  it "restores a mix of String and Array keys under GC.stress and auto-compaction" do
    results = run_fixture("keys_mixed_restore_under_gc_stress.rb")
    expected = expected_triples(100) { |n| n.even? ? ["partner", n.to_s] : "key-#{n}" }
    expect(results[:from_h]).to eq(expected)
    expect(results[:from_h_missing]).to eq([])
    expect(results[:marshal]).to eq(expected)
    expect(results[:marshal_missing]).to eq([])
  end

  it "holds, finds and restores keys whose hash method compacts the heap", :mistyped do
    results = run_fixture("keys_compacting_hash.rb")
    described = ->(n) { [[:compacting, n], ["partner", n.to_s], "key-#{n}"].fetch(n % 3) }
    expect(results[:inserted]).to eq(Array.new(60) { |n| (n % 3).zero? ? [(n * 10) + 1, (n * 10) + 1] : [n * 10, (n * 10) + 1] })
    expect(results[:found]).to eq(Array.new(60) { |n| [(n % 3).zero? ? [(n * 10) + 1, (n * 10) + 1] : [n * 10, (n * 10) + 1]] })
    expect(results[:held].map(&:first)).to match_array(Array.new(60) { |n| described.call(n) })
    expect(results[:from_h]).to eq(expected_triples(60) { |n| described.call(n) })
    expect(results[:from_h_found]).to eq(Array.new(60) { |n| [[n * 10, n * 10]] })
    expect(results[:marshal]).to eq(results[:held])
  end

  it "copies with dup and clone while objects move, keeping every key" do
    results = run_fixture("keys_copy_under_compaction.rb")
    expect(results.keys).to eq(%i[dup clone frozen_clone])
    results.each do |copy, result|
      expect(result).to include(keys_in_order: true, wrong: [], missing: 0), "#{copy}: #{result.inspect}"
    end
    expect(results.transform_values { |result| result[:frozen] }).to eq(dup: false, clone: false, frozen_clone: true)
    expect(results[:dup][:inserted]).to eq([70, 71])
    expect(results[:clone][:inserted]).to eq([70, 71])
  end

  it "finds every one of 200,000 keys restored by Marshal.load and from_h while the heap compacts" do
    results = run_fixture("keys_restore_200k_under_compaction.rb")
    intact = { size: 200_000, key_count: 200_000, missing: 0, missing_examples: [], wrong: 0, wrong_examples: [] }
    %i[marshal marshal_compacting from_h].each do |restore|
      expect(results[restore]).to eq(intact), "#{restore}: #{results[restore].inspect}"
    end
    # The restores did compact the heap while they ran.
    expect(results[:compactions]).to include(marshal_compacting: be_positive, from_h: be_positive)
  end
end
