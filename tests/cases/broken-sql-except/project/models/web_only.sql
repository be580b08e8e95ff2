SELECT order_id FROM source('web_orders')
EXCEPT
SELECT order_id FROM source('app_orders')
