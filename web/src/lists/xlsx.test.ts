// @vitest-environment node
// Node's Blob has arrayBuffer(), which the XLSX reader uses and jsdom's Blob lacks.
import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { xlsxToCsv } from './xlsx';

/** The smallest workbook Excel would open: one sheet of inline strings and numbers. */
function workbook(rows: (string | number)[][]): Blob {
  const cell = (value: string | number, ref: string) =>
    typeof value === 'number'
      ? `<c r="${ref}"><v>${value}</v></c>`
      : `<c r="${ref}" t="inlineStr"><is><t>${value}</t></is></c>`;
  const sheet = rows
    .map(
      (row, r) =>
        `<row r="${r + 1}">${row.map((value, c) => cell(value, `${String.fromCharCode(65 + c)}${r + 1}`)).join('')}</row>`,
    )
    .join('');
  const files = {
    '[Content_Types].xml': `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`,
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Leads" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    'xl/worksheets/sheet1.xml': `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${sheet}</sheetData></worksheet>`,
  };
  const zip = zipSync(Object.fromEntries(Object.entries(files).map(([name, xml]) => [name, strToU8(xml)])));
  return new Blob([zip]);
}

describe('an XLSX list', () => {
  it('becomes CSV text of its first sheet, numbers kept as written', async () => {
    const csv = await xlsxToCsv(
      workbook([
        ['Name', 'Email', 'Zip'],
        ['Ada, Countess', 'ada@example.com', '01234'],
        ['Grace', 'grace@example.com', 20500],
      ]),
    );
    expect(csv).toBe(
      'Name,Email,Zip\r\n"Ada, Countess",ada@example.com,01234\r\nGrace,grace@example.com,20500',
    );
  });

  it('refuses a file that is not a workbook', async () => {
    await expect(xlsxToCsv(new Blob(['name,email\n']))).rejects.toThrow();
  });
});
