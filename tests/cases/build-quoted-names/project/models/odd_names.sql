SELECT customer_id AS "select", amount AS "we`ird", note FROM source('orders') WHERE note = 'it''s'
