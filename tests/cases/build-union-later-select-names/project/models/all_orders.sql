-- The columns take the first SELECT's names; a later SELECT's columns need none.
SELECT order_id AS id, amount FROM source('web_orders')
UNION ALL
SELECT order_id + 1000000, amount FROM source('app_orders')
