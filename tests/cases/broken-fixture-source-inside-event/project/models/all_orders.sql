SELECT order_id, amount FROM source('web_orders')
UNION ALL
SELECT order_id, amount FROM source('app_orders')
