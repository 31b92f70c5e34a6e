-- pandoc filter for mtm.yaml(5): a table becomes a definition list -- the first column is the
-- term, the middle ones a "header: value" line, the last one the text -- since a page of four
-- columns does not fit a terminal's 80.
local function inlines(cell)
  return pandoc.utils.blocks_to_inlines(cell.contents)
end

function Table(t)
  local headers = t.head.rows[1].cells
  local items = {}
  for _, body in ipairs(t.bodies) do
    for _, row in ipairs(body.body) do
      local cells = row.cells
      local facts = pandoc.List()
      for i = 2, #cells - 1 do
        if #facts > 0 then facts:insert(pandoc.Str("; ")) end
        facts:extend(inlines(headers[i]))
        facts:insert(pandoc.Str(": "))
        facts:extend(inlines(cells[i]))
      end
      table.insert(items, {inlines(cells[1]), {{pandoc.Para(facts), pandoc.Para(inlines(cells[#cells]))}}})
    end
  end
  return pandoc.DefinitionList(items)
end
