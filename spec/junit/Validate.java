// Validates an XML file against an XML Schema (XSD) with the validator the JDK ships.
// Usage: java Validate.java SCHEMA.xsd FILE.xml
// Prints every problem as FILE:LINE:COLUMN: message and exits 1 when there is one.
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import org.xml.sax.ErrorHandler;
import org.xml.sax.SAXParseException;

public class Validate {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: java Validate.java SCHEMA.xsd FILE.xml");
            System.exit(2);
        }
        SchemaFactory factory = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
        Validator validator = factory.newSchema(new File(args[0])).newValidator();
        List<String> problems = new ArrayList<>();
        validator.setErrorHandler(new ErrorHandler() {
            private void record(SAXParseException e) {
                problems.add(args[1] + ":" + e.getLineNumber() + ":" + e.getColumnNumber() + ": " + e.getMessage());
            }
            public void warning(SAXParseException e) { record(e); }
            public void error(SAXParseException e) { record(e); }
            public void fatalError(SAXParseException e) { record(e); }
        });
        try {
            validator.validate(new StreamSource(new File(args[1])));
        } catch (SAXParseException e) {
            // Already recorded by the handler.
        }
        for (String p : problems) {
            System.err.println(p);
        }
        System.exit(problems.isEmpty() ? 0 : 1);
    }
}
