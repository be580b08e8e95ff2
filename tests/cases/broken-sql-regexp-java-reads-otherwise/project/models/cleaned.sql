SELECT id,
  REGEXP_EXTRACT(note, '(?i)order-(\d+)', 1) AS order_id,
  REGEXP(note, '\bpaid\b') AS paid,
  REGEXP_REPLACE(note, '\s*', ' ') AS spaced,
  REGEXP(note, '(a)\1') AS doubled,
  SPLIT_INDEX(note, '', 0) AS first_word
FROM source('notes')
