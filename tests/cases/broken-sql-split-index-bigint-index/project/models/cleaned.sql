SELECT id, SPLIT_INDEX(note, ',', part) AS piece
FROM source('notes')
